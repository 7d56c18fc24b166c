#pragma once

#include "core/ports/operationalcounts.h"

#include <QThreadPool>

#include <atomic>
#include <mutex>
#include <optional>

namespace payonce::app {

/// The last OperationalCounts read from the database, shared by the readers that show
/// them: GET /metrics reads afresh on its worker (readNow), the live stream only takes
/// the last result (last) — its tick runs on the event loop and must never wait for the
/// database — and refreshInBackground() keeps that result about as old as its timer.
class OperationalCountsCache {
public:
    explicit OperationalCountsCache(core::OperationalCountsReader &reader);
    ~OperationalCountsCache();

    /// Reads now on the calling thread; on failure logs it and forgets the last result
    /// (stale counts shown as current would mislead more than none).
    std::optional<core::OperationalCounts> readNow();
    std::optional<core::OperationalCounts> last() const;
    /// Starts a read on the cache's own thread unless one is still running.
    void refreshInBackground();
    /// Waits for a running background read; later calls to refreshInBackground() do nothing.
    void stop();

private:
    core::OperationalCountsReader &m_reader;
    mutable std::mutex m_mutex;
    std::optional<core::OperationalCounts> m_last;
    std::atomic<bool> m_refreshing{false};
    std::atomic<bool> m_stopped{false};
    // One thread that never expires: the database layer keeps a connection per thread.
    QThreadPool m_pool;
};

} // namespace payonce::app
