#include "deliverygroupcommit.h"

#include <algorithm>

namespace payonce::core {

DeliveryGroupCommit::DeliveryGroupCommit(BatchWriter writer, int maxBatch)
    : m_writer(std::move(writer)), m_maxBatch(std::max(1, maxBatch))
{
}

Result<qint64> DeliveryGroupCommit::append(DeliveryRecord record)
{
    Pending mine{std::move(record), std::nullopt};
    std::unique_lock lock(m_mutex);
    m_queue.push_back(&mine);
    m_written.wait(lock, [&] { return mine.result.has_value() || !m_writing; });
    if (!mine.result) {
        // Nobody is writing: this caller writes what is queued until its own row is in.
        m_writing = true;
        while (!mine.result)
            writeOneBatch(lock);
        m_writing = false;
        // Rows queued meanwhile get a writer among their own callers.
        m_written.notify_all();
    }
    return std::move(*mine.result);
}

void DeliveryGroupCommit::writeOneBatch(std::unique_lock<std::mutex> &lock)
{
    const std::size_t size = std::min(m_queue.size(), std::size_t(m_maxBatch));
    QList<Pending *> batch(m_queue.begin(), m_queue.begin() + qsizetype(size));
    m_queue.erase(m_queue.begin(), m_queue.begin() + qsizetype(size));
    QList<DeliveryRecord> rows;
    rows.reserve(batch.size());
    for (const Pending *p : std::as_const(batch))
        rows.append(p->record);

    lock.unlock();
    Result<QList<qint64>> written = m_writer(rows);
    if (written.ok() && written.value().size() != rows.size())
        written = Error::make(ErrorCode::Internal, QStringLiteral("delivery batch: %1 rows written, %2 ids returned")
                                                       .arg(rows.size())
                                                       .arg(written.value().size()));
    lock.lock();

    for (qsizetype i = 0; i < batch.size(); ++i)
        batch[i]->result = written.ok() ? Result<qint64>(written.value().at(i)) : Result<qint64>(written.error());
    if (written.ok()) {
        m_batches.fetch_add(1);
        m_rows.fetch_add(quint64(rows.size()));
    }
    m_written.notify_all();
}

} // namespace payonce::core
