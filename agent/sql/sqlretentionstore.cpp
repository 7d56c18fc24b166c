#include "sqlretentionstore.h"

#include "session.h"

namespace payonce::sql {

namespace {

struct Prunable {
    QString table;
    QString condition; ///< rows of `table` that may go, the cutoff its one bind
};

Prunable prunable(core::RetainedTable table)
{
    switch (table) {
    case core::RetainedTable::Deliveries:
        // An `accepted` row's delivery is what the worker settles it from.
        return {QStringLiteral("callback_deliveries"),
                QStringLiteral("received_at < ? AND NOT EXISTS (SELECT 1 FROM pay_callback_log l WHERE l.delivery_id = "
                               "callback_deliveries.id AND l.status = 'accepted')")};
    case core::RetainedTable::CallbackLog:
        return {QStringLiteral("pay_callback_log"), QStringLiteral("status = 'processed' AND created_at < ?")};
    case core::RetainedTable::OutboxDelivered:
        return {QStringLiteral("outbox"), QStringLiteral("status = 'delivered' AND delivered_at < ?")};
    case core::RetainedTable::QaRuns:
        return {QStringLiteral("qa_runs"), QStringLiteral("status <> 'running' AND finished_at < ?")};
    }
    return {};
}

} // namespace

QString SqlRetentionStore::batchStatement(Dialect dialect, core::RetainedTable table, int limit)
{
    const Prunable p = prunable(table);
    return dialect == Dialect::MariaDb
               ? QStringLiteral("DELETE FROM %1 WHERE %2 ORDER BY id LIMIT %3").arg(p.table, p.condition).arg(limit)
               : QStringLiteral("DELETE FROM %1 WHERE id IN (SELECT id FROM %1 WHERE %2 ORDER BY id LIMIT %3)")
                     .arg(p.table, p.condition)
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
