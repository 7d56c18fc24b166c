#include "sqlcallbackstore.h"

#include "dialectsql.h"
#include "sqlcallbackrows.h"
#include "sqlcallbacktransaction.h"
#include "sqlfindings.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::sql {

using core::CallbackOrder;
using core::Channel;
using core::Error;
using core::ErrorCode;

using namespace callbackrows;

core::Result<std::optional<CallbackOrder>> SqlCallbackStore::findOrderForPayment(const QString &paymentNo)
{
    // The payment record's order (payment_no is unique), or an order of that number.
    return m_database.read([&](Session &session) -> core::Result<std::optional<CallbackOrder>> {
        return readOrderWhere(
            session, QStringLiteral("COALESCE((SELECT order_no FROM payment_records WHERE payment_no = ?), ?)"),
            {paymentNo, paymentNo});
    });
}

core::Result<qint64> SqlCallbackStore::appendDelivery(const core::DeliveryRecord &delivery)
{
    return m_database.write([&](Session &session) { return insertDelivery(session, delivery); });
}

core::Result<QList<qint64>> SqlCallbackStore::appendDeliveries(const QList<core::DeliveryRecord> &deliveries)
{
    QList<QVariantList> rows;
    rows.reserve(deliveries.size());
    for (const core::DeliveryRecord &delivery : deliveries)
        rows.append(deliveryValues(delivery));
    return m_database.write([&](Session &session) -> core::Result<QList<qint64>> {
        return session.execInsertManyReturningIds(kInsertDeliveryHead, kDeliveryColumns, rows,
                                                  QStringLiteral("append callback deliveries"));
    });
}

core::Result<void> SqlCallbackStore::decideDelivery(qint64 id, Layer layer, int httpStatus, const QString &outcome)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        auto done = session.execAffected(
            QStringLiteral("UPDATE callback_deliveries SET layer = ?, http_status = ?, error_code = ? WHERE id = ?"),
            {layerName(layer), httpStatus, textOrNull(outcome), id}, QStringLiteral("decide callback delivery"));
        if (!done)
            return done.error();
        return {};
    });
}

core::Result<std::optional<core::RawDelivery>> SqlCallbackStore::rawDelivery(qint64 id)
{
    return m_database.read([&](Session &session) -> core::Result<std::optional<core::RawDelivery>> {
        auto query = session.exec(
            QStringLiteral("SELECT channel, headers, raw_body, received_at, trace_id FROM callback_deliveries "
                           "WHERE id = ? AND verified = 1"),
            {id}, QStringLiteral("read stored delivery"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        if (!q.next())
            return std::optional<core::RawDelivery>();
        core::RawDelivery raw;
        raw.channel = core::channelFromName(q.value(0).toString()).value_or(Channel::WeChat);
        const QJsonArray headers = QJsonDocument::fromJson(q.value(1).toString().toUtf8()).array();
        for (const QJsonValue &pair : headers) {
            const QJsonArray kv = pair.toArray();
            raw.headers.append({kv.at(0).toString().toLatin1(), kv.at(1).toString().toLatin1()});
        }
        raw.body = q.value(2).toString().toUtf8();
        raw.receivedAtMs = q.value(3).toLongLong();
        raw.traceId = q.value(4).toString();
        return std::optional<core::RawDelivery>(raw);
    });
}

core::Result<core::LogInsert> SqlCallbackStore::insertAccepted(const core::AcceptedCallback &row)
{
    auto inserted = m_log.insertAccepted(CallbackLogEntry{core::channelName(row.channel), row.payNo, row.orderNo,
                                                          row.amountFen, row.deliveryId, row.paymentNo});
    if (!inserted)
        return inserted.error();
    return inserted.value() == InsertOutcome::Inserted ? core::LogInsert::Inserted : core::LogInsert::Duplicate;
}

core::Result<bool> SqlCallbackStore::attachDelivery(core::Channel channel, const QString &payNo, qint64 deliveryId)
{
    return m_log.attachDelivery(core::channelName(channel), payNo, deliveryId);
}

core::Result<QList<core::AcceptedCallback>> SqlCallbackStore::listAccepted(qint64 createdBeforeMs, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::AcceptedCallback>> {
        auto query = session.exec(
            QStringLiteral("SELECT l.channel, l.pay_no, l.order_no, l.amount_fen, l.delivery_id, l.created_at, "
                           "COALESCE(l.payment_no, (SELECT p.payment_no FROM payment_records p WHERE p.order_no = "
                           "l.order_no AND p.channel = l.channel ORDER BY p.attempt DESC LIMIT 1)) "
                           "FROM pay_callback_log l WHERE l.status = 'accepted' AND l.created_at <= ? "
                           "ORDER BY l.created_at, l.id LIMIT %1")
                .arg(qMax(1, limit)),
            {createdBeforeMs}, QStringLiteral("list accepted callbacks"));
        if (!query)
            return query.error();
        QList<core::AcceptedCallback> rows;
        QSqlQuery &q = query.value();
        while (q.next()) {
            core::AcceptedCallback row;
            row.channel = core::channelFromName(q.value(0).toString()).value_or(Channel::WeChat);
            row.payNo = q.value(1).toString();
            row.orderNo = q.value(2).toString();
            row.amountFen = q.value(3).toLongLong();
            if (!q.value(4).isNull())
                row.deliveryId = q.value(4).toLongLong();
            row.createdAtMs = q.value(5).toLongLong();
            row.paymentNo = q.value(6).toString();
            rows.append(row);
        }
        return rows;
    });
}

core::Result<bool> SqlCallbackStore::raiseFinding(const core::CallbackFinding &finding)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        bool inserted = false;
        auto id = upsertFinding(session, finding, session.nowMs(), &inserted);
        if (!id)
            return id.error();
        return inserted;
    });
}

core::Result<void> SqlCallbackStore::inTransaction(
    const std::function<core::Result<void>(core::CallbackTransaction &)> &work)
{
    return m_database.write(
        [&](Session &session) -> core::Result<void> { return runCallbackTransaction(session, m_log, *this, work); });
}

namespace {
const QString kModeSetting = QStringLiteral("callbacks.mode");
} // namespace

core::Result<core::CallbackModeSetting> SqlCallbackModeStore::mode()
{
    return m_database.read([&](Session &session) -> core::Result<core::CallbackModeSetting> {
        auto query = session.exec(
            QStringLiteral("SELECT value, version, updated_at, updated_by, reason FROM settings WHERE name = ?"),
            {kModeSetting}, QStringLiteral("read callbacks mode"));
        if (!query)
            return query.error();
        core::CallbackModeSetting setting;
        QSqlQuery &q = query.value();
        if (!q.next())
            return setting;
        const QJsonObject value = QJsonDocument::fromJson(q.value(0).toString().toUtf8()).object();
        const auto mode = core::callbackModeFromName(value.value(QStringLiteral("mode")).toString());
        if (!mode)
            return Error::make(ErrorCode::Internal,
                               QStringLiteral("unknown callbacks mode in settings: %1").arg(q.value(0).toString()));
        setting.mode = *mode;
        setting.version = q.value(1).toLongLong();
        setting.changedAtMs = q.value(2).toLongLong();
        setting.actor = q.value(3).toString();
        setting.reason = q.value(4).toString();
        return setting;
    });
}

core::Result<void> SqlCallbackModeStore::setMode(core::CallbackMode mode, const QString &actor, const QString &reason,
                                                 qint64 now, const std::function<core::Result<void>()> &inTransaction)
{
    const QString json = QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("mode"), core::callbackModeName(mode)}})
            .toJson(QJsonDocument::Compact));
    return m_database.write([&](Session &session) -> core::Result<void> {
        static const QStringList columns{QStringLiteral("name"),       QStringLiteral("value"),
                                         QStringLiteral("version"),    QStringLiteral("updated_at"),
                                         QStringLiteral("updated_by"), QStringLiteral("reason")};
        auto inserted = session.execAffected(
            insertIfAbsentSql(session.dialect(), QStringLiteral("settings"), columns, QStringLiteral("name")),
            {kModeSetting, json, 1, now, actor, reason}, QStringLiteral("insert callbacks mode"));
        if (!inserted)
            return inserted.error();
        if (inserted.value() != 1) {
            auto updated = session.execAffected(
                QStringLiteral("UPDATE settings SET value = ?, version = version + 1, updated_at = ?, updated_by = ?, "
                               "reason = ? WHERE name = ?"),
                {json, now, actor, reason, kModeSetting}, QStringLiteral("update callbacks mode"));
            if (!updated)
                return updated.error();
        }
        return inTransaction ? inTransaction() : core::Result<void>();
    });
}

core::Result<qint64> SqlCallbackModeStore::acceptedWaiting()
{
    return m_database.read([&](Session &session) -> core::Result<qint64> {
        auto query = session.exec(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'accepted'"), {},
                                  QStringLiteral("count accepted callbacks"));
        if (!query)
            return query.error();
        return query.value().next() ? query.value().value(0).toLongLong() : qint64(0);
    });
}

} // namespace payonce::sql
