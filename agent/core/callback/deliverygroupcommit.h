#pragma once

#include "core/common/result.h"
#include "core/ports/callbackstore.h"

#include <QList>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace payonce::core {

/// Delivery rows written together, one transaction for many: a duplicate the seen set
/// answers, or a rejection, is decided before its row is written, so its only database
/// work is that row. Its answer still waits until the transaction holding its row has
/// committed (a SUCCESS the platform hears is a delivery on disk), but one commit carries
/// every row that arrived while the previous one was in flight.
///
/// One writer thread of its own (started by the first row, with a database connection of
/// its own): it writes every row queued so far in one transaction (at most maxBatch), then
/// the next. Under no load a row is written alone at once; under load the batches grow by
/// themselves, with no timer adding latency.
///
/// append(record, done) does not wait: `done` is called on the writer thread once the
/// row's transaction has committed (with its id) or failed. So a request thread hands its
/// answer to the batch and is free for the next request while the batch commits.
/// append(record) waits for the same.
///
/// Thread-safe. A failed transaction fails every row in it (each answers FAIL, so the
/// platform sends again); nothing in it was written. At most maxQueued rows wait: one more
/// is refused at once (Unavailable, counted in queueFullRefusals()), nothing written. The
/// destructor writes what is queued, tells its callers, and joins the writer.
class DeliveryGroupCommit {
public:
    /// Writes rows in one transaction; their ids, in order, once it has committed.
    using BatchWriter = std::function<Result<QList<qint64>>(const QList<DeliveryRecord> &)>;
    /// Called once with the row's id, or the error that kept it from being written.
    using Done = std::function<void(Result<qint64>)>;

    explicit DeliveryGroupCommit(BatchWriter writer, int maxBatch = 256, int maxQueued = 8192);
    ~DeliveryGroupCommit();
    DeliveryGroupCommit(const DeliveryGroupCommit &) = delete;
    DeliveryGroupCommit &operator=(const DeliveryGroupCommit &) = delete;

    /// Queues the row; `done` follows its transaction (see above).
    void append(DeliveryRecord record, Done done);
    /// The row's id once its transaction has committed, or that transaction's error.
    Result<qint64> append(DeliveryRecord record);

    /// Transactions written, and the rows they held (rows / batches: the grouping won).
    quint64 batchesWritten() const { return m_batches.load(); }
    quint64 rowsWritten() const { return m_rows.load(); }
    /// Rows refused because maxQueued were waiting already.
    quint64 queueFullRefusals() const { return m_refused.load(); }

private:
    struct Pending {
        DeliveryRecord record;
        Done done;
    };
    void writeUntilStopped();
    /// Writes the rows at the queue's front and tells their callers; called with the mutex
    /// held, which it releases while the transaction runs and the callers are told.
    void writeOneBatch(std::unique_lock<std::mutex> &lock);

    BatchWriter m_writer;
    int m_maxBatch;
    std::size_t m_maxQueued;
    std::mutex m_mutex;
    std::condition_variable m_queued;
    std::deque<Pending> m_queue;
    bool m_stopping = false;
    std::thread m_thread; ///< started by the first append
    std::atomic<quint64> m_batches{0};
    std::atomic<quint64> m_rows{0};
    std::atomic<quint64> m_refused{0};
};

} // namespace payonce::core
