#pragma once

#include "core/ports/callbackstore.h"
#include "core/result.h"

#include <QList>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

namespace payonce::core {

/// Delivery rows written together, one transaction for many: a duplicate the seen set
/// answers, or a rejection, is decided before its row is written, so its only database
/// work is that row. Each caller still returns only once the transaction holding its
/// row has committed (a SUCCESS the platform hears is a delivery on disk), but one commit
/// now carries every row that arrived while the previous one was in flight.
///
/// Leader and followers, no thread of its own: a caller that finds no batch being written
/// writes every row queued so far (its own among them, at most maxBatch a transaction)
/// and the others wait for it. Under no load a row is written alone at once; under load
/// the batches grow by themselves, with no timer adding latency.
///
/// Thread-safe. A failed transaction fails every row in it (each caller sees the error and
/// answers FAIL, so the platform sends again); nothing in it was written.
class DeliveryGroupCommit {
public:
    /// Writes rows in one transaction; their ids, in order, once it has committed.
    using BatchWriter = std::function<Result<QList<qint64>>(const QList<DeliveryRecord> &)>;

    explicit DeliveryGroupCommit(BatchWriter writer, int maxBatch = 256);
    DeliveryGroupCommit(const DeliveryGroupCommit &) = delete;
    DeliveryGroupCommit &operator=(const DeliveryGroupCommit &) = delete;

    /// The row's id once its transaction has committed, or that transaction's error.
    Result<qint64> append(DeliveryRecord record);

    /// Transactions written, and the rows they held (rows / batches: the grouping won).
    quint64 batchesWritten() const { return m_batches.load(); }
    quint64 rowsWritten() const { return m_rows.load(); }

private:
    struct Pending {
        DeliveryRecord record;
        std::optional<Result<qint64>> result;
    };
    /// Writes the rows at the queue's front; called with the mutex held, which it releases
    /// while the transaction runs.
    void writeOneBatch(std::unique_lock<std::mutex> &lock);

    BatchWriter m_writer;
    int m_maxBatch;
    std::mutex m_mutex;
    std::condition_variable m_written;
    std::deque<Pending *> m_queue;
    bool m_writing = false;
    std::atomic<quint64> m_batches{0};
    std::atomic<quint64> m_rows{0};
};

} // namespace payonce::core
