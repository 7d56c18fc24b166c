#pragma once

#include "core/ports/clock.h"

#include <atomic>

namespace payonce::simulation {

/// The simulation's time: it moves only when an operation moves it, so a seed replays the
/// same decisions (timeouts, ages, windows) however fast the machine runs it. Every port
/// and every SQL row of the run take their time from it. Thread-safe.
class SimClock final : public core::Clock {
public:
    /// Starts on a fixed instant (2026-01-01T00:00:00Z) so traces do not depend on the day.
    SimClock() : m_nowMs(1767225600000) {}
    qint64 nowMs() const override { return m_nowMs.load(); }
    void advance(qint64 ms) { m_nowMs.fetch_add(ms); }

private:
    std::atomic<qint64> m_nowMs;
};

} // namespace payonce::simulation
