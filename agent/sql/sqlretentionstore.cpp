#include "sqlretentionstore.h"

#include "session.h"

namespace payonce::sql {

namespace {

struct Prunable {
    QString table;
    QString condition;  ///< rows of `table` that may go, the cutoff its one bind
    QString timeColumn; ///< what the cutoff is compared with: a batch takes the oldest by it
};

Prunable prunable(core::RetainedTable table)
{
    switch (table) {
    case core::RetainedTable::Deliveries:
        // An `accepted` row's delivery is what the worker settles it from.
        return {QStringLiteral("callback_deliveries"),
                QStringLiteral("received_at < ? AND NOT EXISTS (SELECT 1 FROM pay_callback_log l WHERE l.delivery_id = "
                               "callback_deliveries.id AND l.status = 'accepted')"),
                QStringLiteral("received_at")};
    case core::RetainedTable::CallbackLog:
        return {QStringLiteral("pay_callback_log"), QStringLiteral("status = 'processed' AND created_at < ?"),
                QStringLiteral("created_at")};
    case core::RetainedTable::OutboxDelivered:
        return {QStringLiteral("outbox"), QStringLiteral("status = 'delivered' AND delivered_at < ?"),
                QStringLiteral("delivered_at")};
    case core::RetainedTable::QaRuns:
        return {QStringLiteral("qa_runs"), QStringLiteral("status <> 'running' AND finished_at < ?"),
                QStringLiteral("finished_at")};
    }
    return {};
}

} // namespace

QString SqlRetentionStore::batchStatement(Dialect dialect, core::RetainedTable table, int limit)
{
    const Prunable p = prunable(table);
    // Ordered by the time column, which the condition's range is on: its index finds the
    // old rows and gives them in order. Ordered by id, SQLite's planner walked the whole
    // table in id order (under the write lock) to find a few old rows or none.
    return dialect == Dialect::MariaDb
               ? QStringLiteral("DELETE FROM %1 WHERE %2 ORDER BY %3 LIMIT %4")
                     .arg(p.table, p.condition, p.timeColumn)
                     .arg(limit)
               : QStringLiteral("DELETE FROM %1 WHERE id IN (SELECT id FROM %1 WHERE %2 ORDER BY %3 LIMIT %4)")
                     .arg(p.table, p.condition, p.timeColumn)
                     .arg(limit);
}

core::Result<int> SqlRetentionStore::pruneBatch(core::RetainedTable table, qint64 cutoffMs, int limit)
{
    const QString statement = batchStatement(m_database.dialect(), table, limit);
    return m_database.write([&](Session &session) -> core::Result<int> {
        return session.execAffected(statement, {cutoffMs},
                                    QStringLiteral("prune %1").arg(core::retainedTableName(table)));
    });
}

} // namespace payonce::sql
