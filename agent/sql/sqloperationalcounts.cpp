#include "sqloperationalcounts.h"

#include <QSqlQuery>

#include <algorithm>

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

core::Result<QList<QPair<QString, qint64>>> groupedCount(Session &session, const QString &sql, const QStringList &keys)
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
        // The ages behind the counts (a lag is a wait, not a number of rows): the oldest
        // pending event, and the callbacks accepted but not settled (what accept-only
        // mode leaves for the drain). Both ride the (status, …) indexes.
        auto oldestEvent = session.exec(QStringLiteral("SELECT MIN(created_at) FROM outbox WHERE status = 'pending'"));
        if (!oldestEvent)
            return oldestEvent.error();
        if (oldestEvent.value().next() && !oldestEvent.value().value(0).isNull())
            counts.outboxOldestPendingAgeMs = std::max<qint64>(0, session.nowMs()
                                                                      - oldestEvent.value().value(0).toLongLong());
        auto accepted = session.exec(
            QStringLiteral("SELECT COUNT(*), MIN(created_at) FROM pay_callback_log WHERE status = 'accepted'"));
        if (!accepted)
            return accepted.error();
        if (accepted.value().next()) {
            counts.callbacksAccepted = accepted.value().value(0).toLongLong();
            if (!accepted.value().value(1).isNull())
                counts.callbacksOldestAcceptedAgeMs = std::max<qint64>(0, session.nowMs()
                                                                              - accepted.value().value(1).toLongLong());
        }
        auto compensations = groupedCount(session,
                                          QStringLiteral("SELECT status, COUNT(*) FROM compensations GROUP BY status"),
                                          kCompensationStatuses);
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
