#include "sqlcallbacklog.h"

#include "dialectsql.h"

namespace payonce::sql {

namespace {

const QStringList kColumns{QStringLiteral("channel"),    QStringLiteral("pay_no"),    QStringLiteral("order_no"),
                           QStringLiteral("amount_fen"), QStringLiteral("status"),    QStringLiteral("delivery_id"),
                           QStringLiteral("created_at"), QStringLiteral("payment_no")};

QVariantList bindsFor(const Session &session, const CallbackLogEntry &entry)
{
    return {entry.channel,
            entry.payNo,
            entry.orderNo,
            entry.amountFen,
            QStringLiteral("accepted"),
            entry.deliveryId ? QVariant(*entry.deliveryId) : QVariant(QMetaType(QMetaType::LongLong)),
            session.nowMs(),
            entry.paymentNo.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(entry.paymentNo)};
}

/// How long a statement on a log row may wait for another holder's open transaction (its
/// paid transaction has the row locked — on another agent, maybe paused before COMMIT).
/// Well inside the platforms' ~5 s timeout; MariaDB counts whole seconds.
constexpr int kRowLockWaitMs = 1000;

/// Runs `statement` with its lock waits bounded by kRowLockWaitMs (Session::boundLockWaits:
/// PostgreSQL lock_timeout for the transaction, MariaDB innodb_lock_wait_timeout). A wait
/// that ran out sets *waitEnded and answers Unavailable — not Busy, which write() would run
/// again for as long again. SQLite waits on its one writer lock as every writer does.
core::Result<int> execWithBoundedLockWait(Session &session, const QString &statement, const QVariantList &binds,
                                          const QString &what, bool *waitEnded)
{
    if (session.dialect() != Dialect::Sqlite) {
        if (auto bounded = session.boundLockWaits(kRowLockWaitMs); !bounded)
            return bounded.error();
    }
    auto affected = session.execAffected(statement, binds, what);
    if (!affected && session.lockWaitEnded()) {
        *waitEnded = true;
        return core::Error::make(
            core::ErrorCode::Unavailable,
            what + QStringLiteral(": waited %1 ms for another holder's transaction; ").arg(kRowLockWaitMs)
                + affected.error().internalMessage,
            QStringLiteral("this payment is being processed; retry"));
    }
    return affected;
}

} // namespace

core::Result<InsertOutcome> SqlCallbackLog::insertAccepted(const CallbackLogEntry &entry)
{
    static const QString sql = QStringLiteral("INSERT INTO pay_callback_log (%1) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
                                   .arg(kColumns.join(QStringLiteral(", ")));
    bool waitEnded = false;
    auto written = m_database.write([&](Session &session) -> core::Result<void> {
        waitEnded = false;
        auto done = execWithBoundedLockWait(session, sql, bindsFor(session, entry),
                                            QStringLiteral("insert pay_callback_log"), &waitEnded);
        if (!done)
            return done.error();
        return {};
    });
    if (written)
        return InsertOutcome::Inserted;
    if (written.error().code == core::ErrorCode::Duplicate)
        return InsertOutcome::Duplicate;
    if (waitEnded) {
        // The unique check waited on another holder's open transaction. The row's committed
        // state answers without waiting (MVCC): a row is durable, so this is a duplicate of
        // it; none means the other holder's INSERT has not committed — not yet durable.
        auto committed = m_database.read([&](Session &session) -> core::Result<bool> {
            auto row = session.exec(QStringLiteral("SELECT 1 FROM pay_callback_log WHERE channel = ? AND pay_no = ?"),
                                    {entry.channel, entry.payNo}, QStringLiteral("committed pay_callback_log row"));
            if (!row)
                return row.error();
            return row.value().next();
        });
        if (!committed)
            return committed.error();
        if (committed.value())
            return InsertOutcome::Duplicate;
    }
    return written.error();
}

core::Result<InsertOutcome> SqlCallbackLog::insertAcceptedIfAbsent(Session &session, const CallbackLogEntry &entry)
{
    const QString sql = insertIfAbsentSql(session.dialect(), QStringLiteral("pay_callback_log"), kColumns,
                                          QStringLiteral("id"));
    auto affected = session.execAffected(sql, bindsFor(session, entry),
                                         QStringLiteral("insert-if-absent pay_callback_log"));
    if (!affected)
        return affected.error();
    return affected.value() == 1 ? InsertOutcome::Inserted : InsertOutcome::Duplicate;
}

core::Result<InsertOutcome> SqlCallbackLog::insertProcessedIfAbsent(Session &session, const CallbackLogEntry &entry,
                                                                    const QString &outcome)
{
    static const QStringList columns = kColumns
                                       + QStringList{QStringLiteral("outcome"), QStringLiteral("processed_at")};
    QVariantList binds = bindsFor(session, entry);
    binds[kColumns.indexOf(QStringLiteral("status"))] = QStringLiteral("processed");
    binds << outcome << session.nowMs();
    const QString sql = insertIfAbsentSql(session.dialect(), QStringLiteral("pay_callback_log"), columns,
                                          QStringLiteral("id"));
    auto affected = session.execAffected(sql, binds, QStringLiteral("insert-if-absent processed pay_callback_log"));
    if (!affected)
        return affected.error();
    return affected.value() == 1 ? InsertOutcome::Inserted : InsertOutcome::Duplicate;
}

GroupedWrite SqlCallbackLog::processedRowAfterDelivery(const Session &session, const QString &delivery,
                                                       const CallbackLogEntry &entry, const QString &outcome)
{
    // In a SELECT list a parameter has no column to take its type from: each is cast.
    const QString sql =
        QStringLiteral("INSERT INTO pay_callback_log (%1, outcome, processed_at) SELECT %2, 'processed', %3.id, %4 "
                       "FROM %3 ON CONFLICT DO NOTHING")
            .arg(kColumns.join(QStringLiteral(", ")),
                 castParameters({QStringLiteral("VARCHAR"), QStringLiteral("VARCHAR"), QStringLiteral("VARCHAR"),
                                 QStringLiteral("BIGINT")}),
                 delivery,
                 castParameters({QStringLiteral("BIGINT"), QStringLiteral("VARCHAR"), QStringLiteral("VARCHAR"),
                                 QStringLiteral("BIGINT")}));
    const qint64 now = session.nowMs();
    return GroupedWrite{
        sql,
        {entry.channel, entry.payNo, entry.orderNo, entry.amountFen, now,
         entry.paymentNo.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(entry.paymentNo), outcome,
         now}};
}

core::Result<bool> SqlCallbackLog::attachDelivery(const QString &channel, const QString &payNo, qint64 deliveryId)
{
    bool waitEnded = false;
    auto attached = m_database.write([&](Session &session) -> core::Result<bool> {
        waitEnded = false;
        auto affected = execWithBoundedLockWait(
            session,
            QStringLiteral("UPDATE pay_callback_log SET delivery_id = ? "
                           "WHERE channel = ? AND pay_no = ? AND status = 'accepted' AND delivery_id IS NULL"),
            {deliveryId, channel, payNo}, QStringLiteral("attach delivery to pay_callback_log"), &waitEnded);
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    });
    // Locked by a holder settling it (the patrol's or the closer's transaction): that holder,
    // or the worker after it, finishes the row.
    if (!attached && waitEnded)
        return false;
    return attached;
}

core::Result<bool> SqlCallbackLog::markProcessed(Session &session, const QString &channel, const QString &payNo,
                                                 const QString &outcome)
{
    auto affected = session.execAffected(
        QStringLiteral("UPDATE pay_callback_log SET status = 'processed', outcome = ?, processed_at = ? "
                       "WHERE channel = ? AND pay_no = ? AND status = 'accepted'"),
        {outcome, session.nowMs(), channel, payNo}, QStringLiteral("mark callback processed"));
    if (!affected)
        return affected.error();
    return affected.value() == 1;
}

core::Result<bool> SqlCallbackLog::markProcessedWithDelivery(Session &session, const QString &channel,
                                                             const QString &payNo, const QString &outcome,
                                                             qint64 deliveryId)
{
    auto affected = session.execAffected(
        QStringLiteral(
            "UPDATE pay_callback_log SET status = 'processed', outcome = ?, processed_at = ?, "
            "delivery_id = COALESCE(delivery_id, ?) WHERE channel = ? AND pay_no = ? AND status = 'accepted'"),
        {outcome, session.nowMs(), deliveryId, channel, payNo}, QStringLiteral("finish accepted callback row"));
    if (!affected)
        return affected.error();
    return affected.value() == 1;
}

} // namespace payonce::sql
