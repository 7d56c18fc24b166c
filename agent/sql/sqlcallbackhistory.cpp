#include "sqlcallbackhistory.h"

#include <QSqlQuery>

namespace payonce::sql {

using core::DeliveryView;
using core::LogRowStatus;
using core::LogRowView;

namespace {

// Exactly one of pay_no / order_no filters (the route refuses neither and both).
QString keyColumn(const QString &payNo)
{
    return payNo.isEmpty() ? QStringLiteral("order_no") : QStringLiteral("pay_no");
}

LogRowStatus statusOf(const QString &text)
{
    return text == u"processed" ? LogRowStatus::Processed : LogRowStatus::Accepted;
}

} // namespace

core::Result<QList<DeliveryView>> SqlCallbackHistory::deliveries(const QString &payNo, const QString &orderNo,
                                                                 int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<DeliveryView>> {
        auto query = session.exec(
            QStringLiteral(
                "SELECT id, channel, pay_no, order_no, received_at, verified, layer, http_status, error_code, "
                "agent_id FROM callback_deliveries WHERE %1 = ? ORDER BY received_at, id LIMIT %2")
                .arg(keyColumn(payNo))
                .arg(qMax(1, limit)),
            {payNo.isEmpty() ? orderNo : payNo}, QStringLiteral("list callback deliveries"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        QList<DeliveryView> rows;
        while (q.next()) {
            rows.append(DeliveryView{q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(),
                                     q.value(3).toString(), q.value(4).toLongLong(), q.value(5).toInt() != 0,
                                     q.value(6).toString(), q.value(7).toInt(), q.value(8).toString(),
                                     q.value(9).toString()});
        }
        return rows;
    });
}

core::Result<QList<LogRowView>> SqlCallbackHistory::logRows(const QString &payNo, const QString &orderNo)
{
    return m_database.read([&](Session &session) -> core::Result<QList<LogRowView>> {
        auto query = session.exec(
            QStringLiteral("SELECT channel, pay_no, order_no, amount_fen, status, outcome, delivery_id, created_at, "
                           "processed_at FROM pay_callback_log WHERE %1 = ? ORDER BY created_at, id")
                .arg(keyColumn(payNo)),
            {payNo.isEmpty() ? orderNo : payNo}, QStringLiteral("list callback log rows"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        QList<LogRowView> rows;
        while (q.next()) {
            LogRowView row;
            row.channel = q.value(0).toString();
            row.payNo = q.value(1).toString();
            row.orderNo = q.value(2).toString();
            row.amountFen = q.value(3).toLongLong();
            row.status = statusOf(q.value(4).toString());
            row.outcome = q.value(5).toString();
            if (!q.value(6).isNull())
                row.deliveryId = q.value(6).toLongLong();
            row.createdAtMs = q.value(7).toLongLong();
            row.processedAtMs = q.value(8).toLongLong();
            rows.append(row);
        }
        return rows;
    });
}

core::Result<std::optional<qint64>> SqlCallbackHistory::newestVerifiedDelivery(core::Channel channel,
                                                                               const QString &payNo)
{
    return m_database.read([&](Session &session) -> core::Result<std::optional<qint64>> {
        auto query = session.exec(QStringLiteral("SELECT id FROM callback_deliveries WHERE channel = ? AND pay_no = ? "
                                                 "AND verified = 1 AND raw_body IS NOT NULL ORDER BY id DESC LIMIT 1"),
                                  {core::channelName(channel), payNo}, QStringLiteral("find newest verified delivery"));
        if (!query)
            return query.error();
        if (!query.value().next())
            return std::optional<qint64>();
        return std::optional<qint64>(query.value().value(0).toLongLong());
    });
}

core::Result<std::optional<LogRowStatus>> SqlCallbackHistory::logRowStatus(core::Channel channel, const QString &payNo)
{
    return m_database.read([&](Session &session) -> core::Result<std::optional<LogRowStatus>> {
        auto query = session.exec(
            QStringLiteral("SELECT status FROM pay_callback_log WHERE channel = ? AND pay_no = ?"),
            {core::channelName(channel), payNo}, QStringLiteral("read callback log status"));
        if (!query)
            return query.error();
        if (!query.value().next())
            return std::optional<LogRowStatus>();
        return std::optional<LogRowStatus>(statusOf(query.value().value(0).toString()));
    });
}

} // namespace payonce::sql
