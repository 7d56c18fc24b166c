#include "core/callback/deliverygroupcommit.h"

#include <algorithm>
#include <optional>

#include <pthread.h>

namespace payonce::core {

DeliveryGroupCommit::DeliveryGroupCommit(BatchWriter writer, int maxBatch, int maxQueued)
    : m_writer(std::move(writer)), m_maxBatch(std::max(1, maxBatch)), m_maxQueued(std::size_t(std::max(1, maxQueued)))
{
}

DeliveryGroupCommit::~DeliveryGroupCommit()
{
    {
        std::lock_guard guard(m_mutex);
        m_stopping = true;
    }
    m_queued.notify_one();
    if (m_thread.joinable())
        m_thread.join();
}

void DeliveryGroupCommit::append(DeliveryRecord record, Done done)
{
    std::unique_lock lock(m_mutex);
    if (m_queue.size() >= m_maxQueued || m_stopping) {
        lock.unlock();
        m_refused.fetch_add(1);
        done(Error::make(ErrorCode::Unavailable,
                         QStringLiteral("delivery rows: %1 waiting for their commit already").arg(m_maxQueued)));
        return;
    }
    m_queue.push_back(Pending{std::move(record), std::move(done)});
    if (!m_thread.joinable())
        m_thread = std::thread([this] { writeUntilStopped(); });
    const bool wake = m_queue.size() == 1; // more than one: the writer has not emptied it yet
    lock.unlock();
    if (wake)
        m_queued.notify_one();
}

Result<qint64> DeliveryGroupCommit::append(DeliveryRecord record)
{
    std::mutex mutex;
    std::condition_variable told;
    std::optional<Result<qint64>> result;
    append(std::move(record), [&](Result<qint64> written) {
        // Notified under the mutex: the waiter cannot return (and take these with it)
        // before notify_one() has finished.
        std::lock_guard guard(mutex);
        result = std::move(written);
        told.notify_one();
    });
    std::unique_lock lock(mutex);
    told.wait(lock, [&] { return result.has_value(); });
    return std::move(*result);
}

void DeliveryGroupCommit::writeUntilStopped()
{
    pthread_setname_np(pthread_self(), "delivery-rows"); // as profiles and top show it
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_queued.wait(lock, [this] { return !m_queue.empty() || m_stopping; });
        if (m_queue.empty())
            return; // stopping, and everything queued has been written
        writeOneBatch(lock);
    }
}

void DeliveryGroupCommit::writeOneBatch(std::unique_lock<std::mutex> &lock)
{
    const std::size_t size = std::min(m_queue.size(), std::size_t(m_maxBatch));
    QList<Pending> batch;
    batch.reserve(qsizetype(size));
    for (std::size_t i = 0; i < size; ++i) {
        batch.append(std::move(m_queue.front()));
        m_queue.pop_front();
    }
    lock.unlock();

    QList<DeliveryRecord> rows;
    rows.reserve(batch.size());
    for (Pending &p : batch)
        rows.append(std::move(p.record));
    Result<QList<qint64>> written = m_writer(rows);
    if (written.ok() && written.value().size() != rows.size())
        written = Error::make(ErrorCode::Internal, QStringLiteral("delivery batch: %1 rows written, %2 ids returned")
                                                       .arg(rows.size())
                                                       .arg(written.value().size()));
    if (written.ok()) {
        m_batches.fetch_add(1);
        m_rows.fetch_add(quint64(rows.size()));
    }
    for (qsizetype i = 0; i < batch.size(); ++i)
        batch[i].done(written.ok() ? Result<qint64>(written.value().at(i)) : Result<qint64>(written.error()));

    lock.lock();
}

} // namespace payonce::core
