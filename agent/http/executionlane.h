#pragma once

#include <QString>
#include <QThreadPool>

#include <atomic>

namespace payonce::core {
class Counter;
class MetricsRegistry;
} // namespace payonce::core

namespace payonce::http {

/// Where a route's handler runs (RouteOptions::lane). Each lane has threads of its own,
/// so work that waits on something slow cannot hold up work that must answer quickly.
enum class Lane {
    General,   ///< everything else: the worker pool (worker_threads), queue unbounded
    Callbacks, ///< platform notifications: answered within the platform's ~5 s timeout
    Gateway,   ///< requests that wait on a payment platform (confirm, close, patrol run)
};

/// "general", "callbacks", "gateway": the lane label of the metrics.
QString laneName(Lane lane);

/// A thread pool with a bounded queue: at most threads handlers run and queueLimit more
/// wait; tryAdmit() says whether one more may come (and reserves its place), finished()
/// gives the place back. A refusal is counted (payonce_http_lane_rejected_total{lane}) and
/// answered by the server with 503 and Retry-After before anything is read or written.
/// queueLimit < 0: unbounded (the general lane, as before lanes existed). Thread-safe.
class ExecutionLane {
public:
    ExecutionLane(Lane lane, int threads, int queueLimit);
    ~ExecutionLane();

    /// Counts refusals into registry (which must outlive the lane) as well.
    void countRejectionsIn(core::MetricsRegistry &registry);

    bool tryAdmit();
    void finished() { m_admitted.fetch_sub(1, std::memory_order_acq_rel); }

    Lane lane() const { return m_lane; }
    QThreadPool &pool() { return m_pool; }
    int threads() const { return m_pool.maxThreadCount(); }
    int queueLimit() const { return m_queueLimit; }
    int admitted() const { return m_admitted.load(std::memory_order_acquire); }
    quint64 rejectedTotal() const { return m_rejected.load(std::memory_order_relaxed); }

private:
    const Lane m_lane;
    const int m_queueLimit;
    QThreadPool m_pool;
    std::atomic<int> m_admitted{0};
    std::atomic<quint64> m_rejected{0};
    core::Counter *m_rejectedCounter = nullptr;
};

} // namespace payonce::http
