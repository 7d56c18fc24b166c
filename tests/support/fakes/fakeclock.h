#pragma once

#include "core/ports/clock.h"

#include <atomic>
#include <chrono>

namespace payonce::testsupport {

/// A clock that moves only when the test says so: breaker windows, leases and retry
/// schedules are then decided by the test, not by how fast the machine is. Starts at
/// 2023-11-14 22:13:20 UTC (1 700 000 000 000 ms). Thread-safe.
class FakeClock final : public core::Clock {
public:
    qint64 nowMs() const override { return m_now.load(); }
    void advance(std::chrono::milliseconds by) { m_now += by.count(); }

private:
    std::atomic<qint64> m_now{1'700'000'000'000};
};

} // namespace payonce::testsupport
