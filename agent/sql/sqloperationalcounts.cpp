#include "sqloperationalcounts.h"

#include <QSqlQuery>

namespace payonce::sql {

namespace {

// The CHECK constraints' values (sql/*/001_initial.sql): every one is reported, zeros
// included, so a series never vanishes from a scrape.
const QStringList kCompensationStatuses{QStringLiteral("proposed"), QStringLiteral("approved"),
                                        QStringLiteral("rejected"), QStringLiteral("executed"),
                                        QStringLiteral("failed")};
const QStringList kFindingKinds{QStringLiteral("effect_mismatch"), QStringLiteral("missing_outbox"),
                                QStringLiteral("stuck_paying"),    QStringLiteral("stuck_accepted"),
                                QStringLiteral("amount_mismatch"), QStringLiteral("double_payment"),
                                QStringLiteral("oversold")};

core::Result<QList<QPair<QString, qint64>>> groupedCount(Session &session, const QString &sql,
                                                         const QStringList &keys)
{
    auto query = session.exec(sql);
    if (!query)
        return query.error();
    QHash<QString, qint64> counted;
    QSqlQuery &q = query.value();
    while (q.next())
        counted.insert(q.value(0).toString(), q.value(1).toLongLong());
    QList<QPair<QString, qint64>> out;
    for (const QString &key : keys)
        out.append({key, counted.value(key)});
    return out;
}

} // namespace

core::Result<core::OperationalCounts> SqlOperationalCounts::read()
{
    return m_database.read([](Session &session) -> core::Result<core::OperationalCounts> {
        core::OperationalCounts counts;
        auto outbox = groupedCount(session,
                                   QStringLiteral("SELECT status, COUNT(*) FROM outbox WHERE status IN "
                                                  "('pending','dead') GROUP BY status"),
                                   {QStringLiteral("pending"), QStringLiteral("dead")});
        if (!outbox)
            return outbox.error();
        counts.outboxPending = outbox.value().at(0).second;
        counts.outboxDead = outbox.value().at(1).second;
        auto compensations = groupedCount(
            session, QStringLiteral("SELECT status, COUNT(*) FROM compensations GROUP BY status"), kCompensationStatuses);
        if (!compensations)
            return compensations.error();
        counts.compensationsByStatus = compensations.value();
        auto findings = groupedCount(
            session, QStringLiteral("SELECT kind, COUNT(*) FROM findings WHERE status = 'open' GROUP BY kind"),
            kFindingKinds);
        if (!findings)
            return findings.error();
        counts.openFindingsByKind = findings.value();
        return counts;
    });
}

} // namespace payonce::sql
