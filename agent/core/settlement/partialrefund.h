#pragma once

#include <QJsonObject>
#include <QMap>
#include <QString>

namespace payonce::core {

/// The items a refund gives back: sku_id → quantity (positive). Empty: no items (a refund
/// of an amount only, or the refund of the rest, which gives back whatever the order holds).
using RefundItems = QMap<QString, qint64>;

/// The rules of a refund of part of an order's own payment (docs/design.md, "Partial
/// refunds"). The order stays PAID until the whole payment is refunded; its reward coupon
/// stays active until then; its reward points are taken back in proportion to the money
/// refunded, rounded down (in the customer's favour):
///
///     points taken back after refunds of R of a payment of P = floor(reward × R / P)
///
/// so refunds of 1/3 + 1/3 + 1/3 take back exactly what one whole refund would, however
/// the refunds are split, and the refund of the rest takes back everything left.
qint64 pointsTakenBack(qint64 rewardPoints, qint64 refundedFen, qint64 paidFen);

/// What a PAID order with partial refunds of refundedFen is still owed of its reward points.
inline qint64 pointsStillOwed(qint64 rewardPoints, qint64 refundedFen, qint64 paidFen)
{
    return rewardPoints - pointsTakenBack(rewardPoints, refundedFen, paidFen);
}

/// {"SKU-1":2} as a JSON object.
QJsonObject refundItemsObject(const RefundItems &items);
/// {"SKU-1":2} (compact JSON, keys sorted); empty items: an empty string.
QString refundItemsText(const RefundItems &items);
/// The inverse of refundItemsText; an empty or malformed text: no items.
RefundItems refundItemsFromText(const QString &text);

} // namespace payonce::core
