#include "sqlauditreader.h"

#include "sqlwhere.h"

namespace payonce::sql {

core::Result<QList<core::AuditRecord>> SqlAuditReader::list(const core::AuditQuery &query)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::AuditRecord>> {
        WhereClause where;
        where.add(query.sinceMs.has_value(), QStringLiteral("at >= ?"), query.sinceMs.value_or(0))
            .add(!query.actor.isEmpty(), QStringLiteral("actor = ?"), query.actor)
            .add(!query.action.isEmpty(), QStringLiteral("action = ?"), query.action)
            .add(!query.target.isEmpty(), QStringLiteral("target = ?"), query.target);
        auto selected = session.exec(
            QStringLiteral("SELECT id, at, actor, action, target, before_state, after_state, reason, trace_id "
                           "FROM audit_log %1 ORDER BY at DESC, id DESC LIMIT %2")
                .arg(where.sql())
                .arg(qBound(1, query.limit, 1000)),
            where.binds(), QStringLiteral("list audit_log"));
        if (!selected)
            return selected.error();
        QList<core::AuditRecord> records;
        QSqlQuery &q = selected.value();
        while (q.next()) {
            core::AuditRecord r;
            r.id = q.value(0).toLongLong();
            r.atMs = q.value(1).toLongLong();
            r.entry = {q.value(2).toString(), q.value(3).toString(), q.value(4).toString(), q.value(5).toString(),
                       q.value(6).toString(), q.value(7).toString(), q.value(8).toString()};
            records.append(r);
        }
        return records;
    });
}

} // namespace payonce::sql
