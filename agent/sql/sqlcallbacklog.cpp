#include "sqlcallbacklog.h"

#include "dialectsql.h"


namespace payonce::sql {

namespace {

const QStringList kColumns{QStringLiteral("channel"),    QStringLiteral("pay_no"),
                           QStringLiteral("order_no"),   QStringLiteral("amount_fen"),
                           QStringLiteral("status"),     QStringLiteral("delivery_id"),
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

} // namespace

core::Result<InsertOutcome> SqlCallbackLog::insertAccepted(const CallbackLogEntry &entry)
{
    static const QString sql = QStringLiteral("INSERT INTO pay_callback_log (%1) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
                                   .arg(kColumns.join(QStringLiteral(", ")));
    auto written = m_database.write([&](Session &session) -> core::Result<void> {
        auto done = session.exec(sql, bindsFor(session, entry), QStringLiteral("insert pay_callback_log"));
        if (!done)
            return done.error();
        return {};
    });
    if (written)
        return InsertOutcome::Inserted;
    if (written.error().code == core::ErrorCode::Duplicate)
        return InsertOutcome::Duplicate;
    return written.error();
}

core::Result<InsertOutcome> SqlCallbackLog::insertAcceptedIfAbsent(Session &session, const CallbackLogEntry &entry)
{
    const QString sql = insertIfAbsentSql(session.dialect(), QStringLiteral("pay_callback_log"), kColumns,
                                          QStringLiteral("id"));
    auto affected = session.execAffected(sql, bindsFor(session, entry), QStringLiteral("insert-if-absent pay_callback_log"));
    if (!affected)
        return affected.error();
    return affected.value() == 1 ? InsertOutcome::Inserted : InsertOutcome::Duplicate;
}

core::Result<bool> SqlCallbackLog::attachDelivery(const QString &channel, const QString &payNo, qint64 deliveryId)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        auto affected = session.execAffected(
            QStringLiteral("UPDATE pay_callback_log SET delivery_id = ? "
                           "WHERE channel = ? AND pay_no = ? AND status = 'accepted' AND delivery_id IS NULL"),
            {deliveryId, channel, payNo}, QStringLiteral("attach delivery to pay_callback_log"));
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    });
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

} // namespace payonce::sql
