#include "sqlcallbackrows.h"

#include "core/orders/orderstatus.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlQuery>

namespace payonce::sql::callbackrows {

using core::CallbackOrder;
using core::Error;
using core::ErrorCode;

QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}

core::Result<std::optional<CallbackOrder>> readOrderWhere(Session &session, const QString &orderNoSql,
                                                          const QVariantList &binds)
{
    std::optional<CallbackOrder> found;
    auto read = session.forEachRow(
        QStringLiteral("SELECT o.order_no, o.user_id, o.amount_fen, o.currency, o.status, o.pay_no, o.paid_channel, "
                       "o.reward_coupon_template, o.reward_points, i.sku_id, i.qty FROM orders o "
                       "LEFT JOIN order_items i ON i.order_no = o.order_no WHERE o.order_no = %1 ORDER BY i.sku_id")
            .arg(orderNoSql),
        binds,
        [&](const QSqlQuery &q) -> core::Result<void> {
            if (!found) {
                CallbackOrder order;
                order.orderNo = q.value(0).toString();
                order.userId = q.value(1).toLongLong();
                order.amountFen = q.value(2).toLongLong();
                order.currency = q.value(3).toString();
                const auto status = core::orderStatusFromName(q.value(4).toString());
                if (!status)
                    return Error::make(ErrorCode::Internal,
                                       QStringLiteral("order %1 has an unknown status").arg(order.orderNo));
                order.status = *status;
                order.payNo = q.value(5).toString();
                order.paidChannel = q.value(6).toString();
                order.rewardCouponTemplate = q.value(7).toString();
                order.rewardPoints = q.value(8).toLongLong();
                found = order;
            }
            if (!q.isNull(9)) // an order without items has one row, its item columns NULL
                found->items.append({q.value(9).toString(), q.value(10).toLongLong()});
            return {};
        },
        QStringLiteral("read order for callback"));
    if (!read)
        return read.error();
    return found;
}

core::Result<std::optional<CallbackOrder>> readOrder(Session &session, const QString &orderNo)
{
    return readOrderWhere(session, QStringLiteral("?"), {orderNo});
}

QString marks(int n)
{
    QStringList marks;
    marks.fill(QStringLiteral("?"), n);
    return marks.join(QStringLiteral(", "));
}

const QString kInsertDeliveryHead = QStringLiteral(
    "INSERT INTO callback_deliveries (channel, pay_no, order_no, received_at, verified, layer, "
    "http_status, error_code, headers, raw_body, agent_id, trace_id)");

QVariantList deliveryValues(const core::DeliveryRecord &delivery)
{
    const QVariant none(QMetaType(QMetaType::QString));
    QVariant headers = none, body = none;
    if (delivery.verified && !delivery.rawBody.isEmpty()) {
        QJsonArray pairs;
        for (const auto &[name, value] : delivery.headers)
            pairs.append(QJsonArray{QString::fromLatin1(name), QString::fromLatin1(value)});
        headers = QString::fromUtf8(QJsonDocument(pairs).toJson(QJsonDocument::Compact));
        body = QString::fromUtf8(delivery.rawBody);
    }
    return {core::channelName(delivery.channel),
            textOrNull(delivery.payNo),
            textOrNull(delivery.orderNo),
            delivery.receivedAtMs,
            delivery.verified ? 1 : 0,
            layerName(delivery.layer),
            delivery.httpStatus,
            textOrNull(delivery.outcome),
            headers,
            body,
            textOrNull(delivery.agentId),
            textOrNull(delivery.traceId)};
}

core::Result<qint64> insertDelivery(Session &session, const core::DeliveryRecord &delivery)
{
    return session.execInsertReturningId(kInsertDeliveryHead + QStringLiteral(" VALUES (") + marks(kDeliveryColumns)
                                             + QStringLiteral(")"),
                                         deliveryValues(delivery), QStringLiteral("append callback delivery"));
}

} // namespace payonce::sql::callbackrows
