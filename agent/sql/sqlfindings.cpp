#include "sqlfindings.h"

#include "dialectsql.h"
#include "sqlwhere.h"

#include <QJsonDocument>

namespace payonce::sql {

namespace {

const QString kFindingColumns = QStringLiteral(
    "id, kind, subject, order_no, pay_no, evidence, status, seen_count, first_seen_at, last_seen_at");

core::StoredFinding findingFrom(const QSqlQuery &q)
{
    core::StoredFinding f;
    f.id = q.value(0).toLongLong();
    f.kind = q.value(1).toString();
    f.subject = q.value(2).toString();
    f.orderNo = q.value(3).toString();
    f.payNo = q.value(4).toString();
    f.evidence = QJsonDocument::fromJson(q.value(5).toString().toUtf8()).object();
    f.status = q.value(6).toString();
    f.seenCount = q.value(7).toLongLong();
    f.firstSeenAtMs = q.value(8).toLongLong();
    f.lastSeenAtMs = q.value(9).toLongLong();
    return f;
}

QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}
} // namespace

core::Result<qint64> upsertFinding(Session &session, const core::Finding &finding, qint64 nowMs, bool *inserted)
{
    const QString evidence = QString::fromUtf8(QJsonDocument(finding.evidence).toJson(QJsonDocument::Compact));
    static const QStringList columns{
        QStringLiteral("kind"),       QStringLiteral("subject"),       QStringLiteral("order_no"),
        QStringLiteral("pay_no"),     QStringLiteral("evidence"),      QStringLiteral("status"),
        QStringLiteral("seen_count"), QStringLiteral("first_seen_at"), QStringLiteral("last_seen_at")};
    auto added = session.execAffected(
        insertIfAbsentSql(session.dialect(), QStringLiteral("findings"), columns, QStringLiteral("id")),
        {finding.kind, finding.subject, textOrNull(finding.orderNo), textOrNull(finding.payNo), evidence,
         QStringLiteral("open"), 1, nowMs, nowMs},
        QStringLiteral("insert finding"));
    if (!added)
        return added.error();
    if (inserted)
        *inserted = added.value() != 0;
    if (added.value() == 0) {
        auto seen = session.execAffected(
            QStringLiteral("UPDATE findings SET seen_count = seen_count + 1, last_seen_at = ?, evidence = ?, "
                           "status = 'open', resolved_at = NULL WHERE kind = ? AND subject = ?"),
            {nowMs, evidence, finding.kind, finding.subject}, QStringLiteral("finding seen again"));
        if (!seen)
            return seen.error();
    }
    auto id = session.exec(QStringLiteral("SELECT id FROM findings WHERE kind = ? AND subject = ?"),
                           {finding.kind, finding.subject}, QStringLiteral("finding id"));
    if (!id)
        return id.error();
    if (!id.value().next())
        return core::Error::make(core::ErrorCode::Internal, QStringLiteral("finding vanished after its upsert"));
    return id.value().value(0).toLongLong();
}

core::Result<int> resolveFindingsNotSeenSince(Session &session, const QStringList &kinds, qint64 seenSinceMs,
                                              qint64 nowMs)
{
    if (kinds.isEmpty())
        return 0;
    QStringList marks;
    QVariantList binds{nowMs, seenSinceMs};
    for (const QString &kind : kinds) {
        marks.append(QStringLiteral("?"));
        binds.append(kind);
    }
    return session.execAffected(QStringLiteral("UPDATE findings SET status = 'resolved', resolved_at = ? "
                                               "WHERE status = 'open' AND last_seen_at < ? AND kind IN (%1)")
                                    .arg(marks.join(QLatin1Char(','))),
                                binds, QStringLiteral("resolve findings"));
}

core::Result<core::StoredFinding> readFinding(Session &session, qint64 id)
{
    auto query = session.exec(QStringLiteral("SELECT %1 FROM findings WHERE id = ?").arg(kFindingColumns), {id},
                              QStringLiteral("read finding"));
    if (!query)
        return query.error();
    QSqlQuery &q = query.value();
    if (!q.next())
        return core::Error::make(core::ErrorCode::NotFound, QStringLiteral("no finding %1").arg(id));
    return findingFrom(q);
}

core::Result<QList<core::StoredFinding>> listFindings(Session &session, const core::FindingQuery &query)
{
    WhereClause where;
    where.add(!query.status.isEmpty(), QStringLiteral("status = ?"), query.status)
        .add(!query.kind.isEmpty(), QStringLiteral("kind = ?"), query.kind);
    auto selected = session.exec(
        QStringLiteral("SELECT %1 FROM findings %2 ORDER BY last_seen_at DESC, id DESC LIMIT %3")
            .arg(kFindingColumns, where.sql())
            .arg(qBound(1, query.limit, 1000)),
        where.binds(), QStringLiteral("list findings"));
    if (!selected)
        return selected.error();
    QList<core::StoredFinding> findings;
    while (selected.value().next())
        findings.append(findingFrom(selected.value()));
    return findings;
}

} // namespace payonce::sql
