#include "core/retention/retentionpruner.h"

#include "logging/categories.h"

namespace payonce::core {

namespace {

constexpr qint64 kDayMs = 24LL * 3600 * 1000;

} // namespace

QString retainedTableName(RetainedTable table)
{
    switch (table) {
    case RetainedTable::Deliveries: return QStringLiteral("deliveries");
    case RetainedTable::CallbackLog: return QStringLiteral("callback_log");
    case RetainedTable::OutboxDelivered: return QStringLiteral("outbox_delivered");
    case RetainedTable::QaRuns: return QStringLiteral("qa_runs");
    }
    return QStringLiteral("unknown");
}

RetentionPruner::RetentionPruner(RetentionStore &store, RetentionOptions options) : m_store(store), m_options(options)
{
}

RetentionPruner::Report RetentionPruner::runOnce(qint64 nowMs)
{
    Report report;
    if (m_running.exchange(true)) {
        report.skipped = true;
        return report;
    }
    for (RetainedTable table : allRetainedTables) {
        const int days = m_options.days[std::size_t(table)];
        if (days <= 0)
            continue;
        const qint64 cutoff = nowMs - qint64(days) * kDayMs;
        for (int batch = 0;; ++batch) {
            if (batch == m_options.maxBatchesPerRun) {
                report.complete = false;
                break;
            }
            auto pruned = m_store.pruneBatch(table, cutoff, m_options.batchSize);
            if (!pruned.ok()) {
                qCWarning(payonce::lcCore).noquote()
                    << "retention:" << retainedTableName(table) << "not pruned:" << pruned.error().internalMessage;
                report.complete = false;
                break;
            }
            report.deleted[std::size_t(table)] += pruned.value();
            m_deleted[std::size_t(table)].fetch_add(pruned.value());
            if (pruned.value() < m_options.batchSize)
                break;
        }
    }
    m_running = false;
    return report;
}

} // namespace payonce::core
