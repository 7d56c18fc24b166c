#pragma once

#include <QString>

#include <optional>

namespace payonce::core {

/// An operator's say over a breaker. Auto: the failure rate decides. ForcedOpen: every
/// call fails fast. ForcedClosed: every call goes through, whatever the failure rate.
enum class BreakerMode {
    Auto,
    ForcedOpen,
    ForcedClosed
};

/// "auto", "forced_open", "forced_closed".
QString breakerModeName(BreakerMode mode);
std::optional<BreakerMode> breakerModeFromName(QStringView name);

/// A mode as an operator set it. Past expiresAtMs the breaker is back to Auto.
struct BreakerModeSetting {
    BreakerMode mode = BreakerMode::Auto;
    QString actor;
    QString reason;
    qint64 changedAtMs = 0;
    std::optional<qint64> expiresAtMs;

    /// The mode in force at `nowMs` (Auto once expired).
    BreakerMode effectiveAt(qint64 nowMs) const
    {
        if (expiresAtMs && nowMs >= *expiresAtMs)
            return BreakerMode::Auto;
        return mode;
    }
};

} // namespace payonce::core
