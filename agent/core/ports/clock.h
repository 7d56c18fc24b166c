#pragma once

#include <QDateTime>

namespace payonce::core {

/// Wall-clock time in UTC epoch milliseconds. Injected wherever time decides something
/// (breaker windows, retention, lock-timeouts, thresholds), so tests run on a fake clock.
/// Implementations are thread-safe.
class Clock {
public:
    virtual ~Clock() = default;
    virtual qint64 nowMs() const = 0;
};

/// The real clock.
class SystemClock final : public Clock {
public:
    qint64 nowMs() const override { return QDateTime::currentMSecsSinceEpoch(); }
};

} // namespace payonce::core
