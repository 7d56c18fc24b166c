#include "core/callback/paideffects.h"

namespace payonce::core {

namespace {

Result<void> takeStock(CallbackTransaction &tx, const CallbackOrder &order, const PaymentNotification &n, qint64 fence,
                       const QString &keySuffix, PaidEffectsWritten &written)
{
    for (const CallbackOrder::Item &item : order.items) {
        auto taken = tx.takeStock(item.skuId, item.qty);
        if (!taken.ok())
            return taken.error();
        if (!taken.value()) {
            const CallbackFinding finding{
                QStringLiteral("oversold"), order.orderNo + QLatin1Char(':') + item.skuId, order.orderNo, n.payNo,
                QJsonObject{{QStringLiteral("sku_id"), item.skuId},
                            {QStringLiteral("qty"), item.qty},
                            {QStringLiteral("proposal"), QStringLiteral("refund_or_backorder")}}};
            if (auto raised = raiseFindingIn(tx, finding, written.newFindings); !raised.ok())
                return raised.error();
            continue;
        }
        auto logged = tx.insertStockLog(order.orderNo, item.skuId, QStringLiteral("take") + keySuffix, item.qty, fence);
        if (!logged.ok())
            return logged.error();
        if (!logged.value()) {
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
    if (!order.rewardCouponTemplate.isEmpty()) {
        auto coupon = tx.insertCoupon(orderNo, order.userId, order.rewardCouponTemplate + keySuffix, fence);
        if (!coupon.ok())
            return coupon.error();
        if (!coupon.value())
            ++written.keysFoundTaken;
    }
    if (order.rewardPoints > 0) {
        auto points = tx.insertPoints(orderNo, order.userId, QStringLiteral("reward") + keySuffix, order.rewardPoints,
                                      fence);
        if (!points.ok())
            return points.error();
        if (!points.value())
            ++written.keysFoundTaken;
    }
    auto outboxed = tx.insertOutbox(QStringLiteral("order.paid:") + orderNo, QStringLiteral("order.paid"), orderNo,
                                    QJsonObject{{QStringLiteral("order_no"), orderNo},
                                                {QStringLiteral("pay_no"), n.payNo},
                                                {QStringLiteral("channel"), channelName(n.channel)},
                                                {QStringLiteral("amount_fen"), n.amountFen},
                                                {QStringLiteral("user_id"), order.userId}},
                                    traceId);
    if (!outboxed.ok())
        return outboxed.error();
    auto recorded = tx.markPaymentRecordPaid(n.paymentNo);
    if (!recorded.ok())
        return recorded.error();
    return takeStock(tx, order, n, fence, keySuffix, written);
}

} // namespace payonce::core
