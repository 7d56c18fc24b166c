#include "core/callback/paideffects.h"

namespace payonce::core {

namespace {

Result<void> takeStock(CallbackTransaction &tx, const CallbackOrder &order, const PaymentNotification &n, qint64 fence,
                       const QString &keySuffix, PaidEffectsWritten &written)
{
    for (const CallbackOrder::Item &item : order.items) {
        auto taken = tx.takeStockLogged(order.orderNo, item.skuId, QStringLiteral("take") + keySuffix, item.qty, fence);
        if (!taken.ok())
            return taken.error();
        if (!taken.value().taken) {
            const CallbackFinding finding{
                QStringLiteral("oversold"), order.orderNo + QLatin1Char(':') + item.skuId, order.orderNo, n.payNo,
                QJsonObject{{QStringLiteral("sku_id"), item.skuId},
                            {QStringLiteral("qty"), item.qty},
                            {QStringLiteral("proposal"), QStringLiteral("refund_or_backorder")}}};
            if (auto raised = raiseFindingIn(tx, finding, written.newFindings); !raised.ok())
                return raised.error();
            continue;
        }
        if (!taken.value().logged) {
            // Another path took this stock already (its stock_log row exists): give back
            // what this uncommitted transaction just took.
            auto back = tx.untakeStock(item.skuId, item.qty);
            if (!back.ok())
                return back.error();
            ++written.keysFoundTaken;
        }
    }
    return {};
}

} // namespace

Result<void> raiseFindingIn(CallbackTransaction &tx, const CallbackFinding &finding,
                            QList<CallbackFinding> &newFindings)
{
    auto raised = tx.raiseFinding(finding);
    if (!raised.ok())
        return raised.error();
    if (raised.value())
        newFindings.append(finding);
    return {};
}

Result<void> writePaidEffects(CallbackTransaction &tx, const CallbackOrder &order, const PaymentNotification &n,
                              qint64 fence, const QString &keySuffix, const QString &traceId,
                              PaidEffectsWritten &written)
{
    const QString &orderNo = order.orderNo;
    PaidRows rows;
    rows.orderNo = orderNo;
    rows.userId = order.userId;
    rows.fence = fence;
    if (!order.rewardCouponTemplate.isEmpty())
        rows.couponTemplateKey = order.rewardCouponTemplate + keySuffix;
    if (order.rewardPoints > 0) {
        rows.pointType = QStringLiteral("reward") + keySuffix;
        rows.pointsDelta = order.rewardPoints;
    }
    rows.outboxEventId = QStringLiteral("order.paid:") + orderNo;
    rows.outboxEventType = QStringLiteral("order.paid");
    rows.outboxPayload = QJsonObject{{QStringLiteral("order_no"), orderNo},
                                     {QStringLiteral("pay_no"), n.payNo},
                                     {QStringLiteral("channel"), channelName(n.channel)},
                                     {QStringLiteral("amount_fen"), n.amountFen},
                                     {QStringLiteral("user_id"), order.userId}};
    rows.traceId = traceId;
    rows.paymentNo = n.paymentNo;
    auto inserted = tx.insertPaidRows(rows);
    if (!inserted.ok())
        return inserted.error();
    if (!rows.couponTemplateKey.isEmpty() && !inserted.value().coupon)
        ++written.keysFoundTaken;
    if (rows.pointsDelta > 0 && !inserted.value().points)
        ++written.keysFoundTaken;
    return takeStock(tx, order, n, fence, keySuffix, written);
}

} // namespace payonce::core
