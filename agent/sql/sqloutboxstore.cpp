#include "sqloutboxstore.h"

#include "database.h"

#include "core/qa/mutants.h"

#include <QMap>
#include <QStringList>

namespace payonce::sql {

using core::Error;
using core::ErrorCode;
using core::OutboxEvent;
using core::OutboxOutcome;
using core::OutboxStatus;

namespace {

const QString kColumns = QStringLiteral(
    "id, event_id, event_type, aggregate_id, payload, status, attempts, next_attempt_at, claimed_by, "
    "claimed_until, last_error, redriven, trace_id, created_at, delivered_at");

OutboxEvent eventFrom(const QSqlQuery &q)
{
    OutboxEvent e;
    e.id = q.value(0).toLongLong();
    e.eventId = q.value(1).toString();
    e.eventType = q.value(2).toString();
    e.aggregateId = q.value(3).toString();
    e.payload = q.value(4).toString();
    e.status = core::outboxStatusFromName(q.value(5).toString()).value_or(OutboxStatus::Pending);
    e.attempts = q.value(6).toInt();
    e.nextAttemptAtMs = q.value(7).toLongLong();
    e.claimedBy = q.value(8).toString();
    if (!q.value(9).isNull())
        e.claimedUntilMs = q.value(9).toLongLong();
    e.lastError = q.value(10).toString();
    e.redriven = q.value(11).toInt() != 0;
    e.traceId = q.value(12).toString();
    e.createdAtMs = q.value(13).toLongLong();
    if (!q.value(14).isNull())
        e.deliveredAtMs = q.value(14).toLongLong();
    return e;
}

/// Delivered events with the same attempt count marked in as few statements as it takes:
/// `id IN (…)` lists of 64, 32, …, 1 ids, so at most seven texts are kept prepared.
core::Result<int> markDelivered(Session &session, const QString &dispatcherId, int attempts, const QList<qint64> &ids,
                                qint64 nowMs)
{
    // The mutant (simulation only) leaves delivered events pending, to be sent again.
    const QString status = core::mutants::isOn(core::mutants::Mutant::DuplicateOutbox) ? QStringLiteral("pending")
                                                                                       : QStringLiteral("delivered");
    int applied = 0;
    qsizetype at = 0;
    while (at < ids.size()) {
        qsizetype chunk = 64;
        while (chunk > ids.size() - at)
            chunk /= 2;
        QStringList marks;
        marks.fill(QStringLiteral("?"), chunk);
        QVariantList binds{status, attempts, nowMs};
        for (qsizetype i = at; i < at + chunk; ++i)
            binds << ids.at(i);
        binds << dispatcherId;
        auto affected = session.execAffected(
            QStringLiteral("UPDATE outbox SET status = ?, attempts = ?, delivered_at = ?, claimed_by = NULL, "
                           "claimed_until = NULL WHERE id IN (%1) AND status = 'pending' AND claimed_by = ?")
                .arg(marks.join(QStringLiteral(", "))),
            binds, QStringLiteral("outbox delivered"));
        if (!affected)
            return affected.error();
        applied += affected.value();
        at += chunk;
    }
    return applied;
}

} // namespace

std::unique_lock<std::mutex> SqlOutboxStore::sqliteTurn()
{
    if (m_database.dialect() == Dialect::Sqlite)
        return std::unique_lock<std::mutex>(m_sqliteWriter);
    return {};
}

core::Result<QList<OutboxEvent>> SqlOutboxStore::claim(const QString &dispatcherId, int limit, qint64 nowMs,
                                                       qint64 claimedUntilMs)
{
    const auto turn = sqliteTurn();
    return m_database.write([&](Session &session) -> core::Result<QList<OutboxEvent>> {
        // SQLite has no row locks: BEGIN IMMEDIATE already made this the only writer.
        const QString lock = session.dialect() == Dialect::Sqlite ? QString()
                                                                  : QStringLiteral(" FOR UPDATE SKIP LOCKED");
        auto selected = session.exec(
            QStringLiteral("SELECT %1 FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? "
                           "AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY id LIMIT %2%3")
                .arg(kColumns)
                .arg(qMax(1, limit))
                .arg(lock),
            {nowMs, nowMs}, QStringLiteral("select due outbox rows"));
        if (!selected)
            return selected.error();
        QList<OutboxEvent> events;
        QSqlQuery &q = selected.value();
        while (q.next())
            events.append(eventFrom(q));
        if (events.isEmpty())
            return events;

        QStringList ids;
        ids.reserve(events.size());
        for (OutboxEvent &e : events) {
            ids.append(QString::number(e.id));
            e.claimedBy = dispatcherId;
            e.claimedUntilMs = claimedUntilMs;
        }
        auto updated = session.execAffected(
            QStringLiteral("UPDATE outbox SET claimed_by = ?, claimed_until = ? WHERE id IN (%1)")
                .arg(ids.join(QLatin1Char(','))),
            {dispatcherId, claimedUntilMs}, QStringLiteral("claim outbox rows"));
        if (!updated)
            return updated.error();
        if (updated.value() != int(events.size()))
            return Error::make(
                ErrorCode::Internal,
                QStringLiteral("outbox claim: %1 rows selected, %2 updated").arg(events.size()).arg(updated.value()));
        return events;
    });
}

core::Result<int> SqlOutboxStore::complete(const QString &dispatcherId, const QList<OutboxOutcome> &outcomes,
                                           qint64 nowMs)
{
    if (outcomes.isEmpty())
        return 0;
    const auto turn = sqliteTurn();
    return m_database.write([&](Session &session) -> core::Result<int> {
        int applied = 0;
        // Each statement changes claimed_until, so MariaDB's changed-rows count is the
        // matched-rows count here.
        const QString guard = QStringLiteral(" WHERE id = ? AND status = 'pending' AND claimed_by = ?");
        // Delivered events, the usual outcome, are marked in a statement per attempt count
        // (one for a whole batch delivered at the first attempt) rather than one per event.
        QMap<int, QList<qint64>> deliveredByAttempts;
        for (const OutboxOutcome &o : outcomes) {
            core::Result<int> r = 0;
            switch (o.kind) {
            case OutboxOutcome::Kind::Delivered: deliveredByAttempts[o.attempts].append(o.id); continue;
            case OutboxOutcome::Kind::Retry:
                r = session.execAffected(QStringLiteral("UPDATE outbox SET attempts = ?, next_attempt_at = ?, "
                                                        "last_error = ?, claimed_by = NULL, claimed_until = NULL")
                                             + guard,
                                         {o.attempts, o.nextAttemptAtMs, o.error, o.id, dispatcherId},
                                         QStringLiteral("outbox retry"));
                break;
            case OutboxOutcome::Kind::Dead:
                r = session.execAffected(QStringLiteral("UPDATE outbox SET status = 'dead', attempts = ?, "
                                                        "last_error = ?, claimed_by = NULL, claimed_until = NULL")
                                             + guard,
                                         {o.attempts, o.error, o.id, dispatcherId}, QStringLiteral("outbox dead"));
                break;
            case OutboxOutcome::Kind::Released:
                r = session.execAffected(QStringLiteral("UPDATE outbox SET claimed_by = NULL, claimed_until = NULL")
                                             + guard,
                                         {o.id, dispatcherId}, QStringLiteral("outbox release"));
                break;
            }
            if (!r)
                return r.error();
            applied += r.value();
        }
        for (auto group = deliveredByAttempts.cbegin(); group != deliveredByAttempts.cend(); ++group) {
            auto marked = markDelivered(session, dispatcherId, group.key(), group.value(), nowMs);
            if (!marked)
                return marked.error();
            applied += marked.value();
        }
        return applied;
    });
}

core::Result<QList<OutboxEvent>> SqlOutboxStore::list(std::optional<OutboxStatus> status, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<OutboxEvent>> {
        auto selected = session.exec(QStringLiteral("SELECT %1 FROM outbox %2 ORDER BY id DESC LIMIT %3")
                                         .arg(kColumns, status ? QStringLiteral("WHERE status = ?") : QString())
                                         .arg(qBound(1, limit, 1000)),
                                     status ? QVariantList{core::outboxStatusName(*status)} : QVariantList{},
                                     QStringLiteral("list outbox"));
        if (!selected)
            return selected.error();
        QList<OutboxEvent> events;
        QSqlQuery &q = selected.value();
        while (q.next())
            events.append(eventFrom(q));
        return events;
    });
}

core::Result<OutboxEvent> SqlOutboxStore::redrive(qint64 id, qint64 nowMs, const RedriveHook &hook)
{
    const auto turn = sqliteTurn();
    return m_database.write([&](Session &session) -> core::Result<OutboxEvent> {
        auto read = [&]() -> core::Result<OutboxEvent> {
            auto selected = session.exec(QStringLiteral("SELECT %1 FROM outbox WHERE id = ?").arg(kColumns), {id},
                                         QStringLiteral("read outbox event"));
            if (!selected)
                return selected.error();
            QSqlQuery &q = selected.value();
            if (!q.next())
                return Error::make(ErrorCode::NotFound, QStringLiteral("outbox event %1 not found").arg(id),
                                   QStringLiteral("no such outbox event"));
            return eventFrom(q);
        };
        auto before = read();
        if (!before)
            return before.error();
        auto updated = session.execAffected(
            QStringLiteral("UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, redriven = 1, "
                           "claimed_by = NULL, claimed_until = NULL WHERE id = ? AND status = 'dead'"),
            {nowMs, id}, QStringLiteral("redrive outbox event"));
        if (!updated)
            return updated.error();
        if (updated.value() == 0)
            return Error::make(ErrorCode::Conflict,
                               QStringLiteral("outbox event %1 is %2, not dead")
                                   .arg(id)
                                   .arg(core::outboxStatusName(before.value().status)),
                               QStringLiteral("only a dead event can be redriven"));
        auto after = read();
        if (!after)
            return after.error();
        if (hook) {
            if (auto hooked = hook(before.value(), after.value()); !hooked)
                return hooked.error();
        }
        return after;
    });
}

} // namespace payonce::sql
