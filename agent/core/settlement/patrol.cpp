#include "core/settlement/patrol.h"
#include "core/settlement/stuckpaying_p.h"

#include "core/callback/callbackpipeline.h"
#include "core/confirm/paymentrecord.h"
#include "core/metrics/streamevents.h"
#include "core/ports/auditwriter.h"
#include "core/ports/callbackmodestore.h"
#include "core/ports/paymentgateway.h"

#include "logging/categories.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>

namespace payonce::core {

namespace {

const QString kActor = QStringLiteral("system:patrol");

struct Check {
    QJsonObject evidence;         ///< empty: effects as owed
    QList<qint64> extraCouponIds; ///< active coupons beyond the one owed
    qint64 extraPoints = 0;       ///< net points beyond reward_points
    qint64 lastPointId = 0;
};

Check check(const PaidOrderEffects &order)
{
    Check out;

    // Coupons: the oldest active one of the reward template is owed, every other active one is extra.
    QJsonArray couponsFound;
    bool keptOwed = false;
    for (const auto &coupon : order.coupons) {
        couponsFound.append(QJsonObject{{QStringLiteral("id"), coupon.id},
                                        {QStringLiteral("template_id"), coupon.templateId},
                                        {QStringLiteral("status"), coupon.status}});
        if (coupon.status != QStringLiteral("active"))
            continue;
        if (!keptOwed && !order.rewardCouponTemplate.isEmpty() && coupon.templateId == order.rewardCouponTemplate)
            keptOwed = true;
        else
            out.extraCouponIds.append(coupon.id);
    }
    const bool couponMissing = !order.rewardCouponTemplate.isEmpty() && !keptOwed;
    if (couponMissing || !out.extraCouponIds.isEmpty()) {
        QJsonArray extra;
        for (qint64 id : out.extraCouponIds)
            extra.append(id);
        out.evidence.insert(
            QStringLiteral("coupons"),
            QJsonObject{{QStringLiteral("expected"),
                         QJsonObject{{QStringLiteral("template_id"), order.rewardCouponTemplate},
                                     {QStringLiteral("active"), order.rewardCouponTemplate.isEmpty() ? 0 : 1}}},
                        {QStringLiteral("found"), couponsFound},
                        {QStringLiteral("extra_ids"), extra}});
    }

    // Points: the net of every entry for the order against reward_points.
    qint64 net = 0;
    QJsonArray pointsFound;
    for (const auto &entry : order.points) {
        net += entry.delta;
        out.lastPointId = std::max(out.lastPointId, entry.id);
        pointsFound.append(QJsonObject{{QStringLiteral("id"), entry.id},
                                       {QStringLiteral("point_type"), entry.pointType},
                                       {QStringLiteral("delta"), entry.delta}});
    }
    if (net != order.rewardPoints) {
        out.extraPoints = std::max<qint64>(0, net - order.rewardPoints);
        out.evidence.insert(QStringLiteral("points"), QJsonObject{{QStringLiteral("expected"), order.rewardPoints},
                                                                  {QStringLiteral("found"), net},
                                                                  {QStringLiteral("entries"), pointsFound}});
    }

    // Stock: per sku, the stock_log sum against the item's qty.
    QMap<QString, qint64> owed;
    for (const auto &item : order.items)
        owed[item.skuId] += item.qty;
    QMap<QString, qint64> taken;
    for (const auto &entry : order.stock)
        taken[entry.skuId] += entry.qty;
    QJsonArray stockDiffs;
    QStringList skus = owed.keys() + taken.keys();
    skus.removeDuplicates();
    skus.sort();
    for (const QString &sku : skus) {
        if (owed.value(sku) != taken.value(sku)) {
            stockDiffs.append(QJsonObject{{QStringLiteral("sku_id"), sku},
                                          {QStringLiteral("expected"), owed.value(sku)},
                                          {QStringLiteral("found"), taken.value(sku)}});
        }
    }
    if (!stockDiffs.isEmpty())
        out.evidence.insert(QStringLiteral("stock"), stockDiffs);
    return out;
}

QString joinIds(const QList<qint64> &ids)
{
    QStringList parts;
    for (qint64 id : ids)
        parts.append(QString::number(id));
    return parts.join(QLatin1Char(','));
}

} // namespace

Result<void> Patrol::checkPaidOrders(qint64 nowMs, QList<StoredFinding> &found)
{
    QString after;
    for (;;) {
        auto page = m_store.paidOrders(after, kPageSize);
        if (!page)
            return page.error();
        for (const PaidOrderEffects &order : page.value()) {
            after = order.orderNo;
            const Check result = check(order);
            if (!result.evidence.isEmpty()) {
                auto raised = m_store.raiseFinding({QStringLiteral("effect_mismatch"),
                                                    QStringLiteral("order:") + order.orderNo, order.orderNo,
                                                    order.payNo, result.evidence},
                                                   nowMs);
                if (!raised)
                    return raised.error();
                found.append(raised.value());
                const qint64 findingId = raised.value().id;
                if (!result.extraCouponIds.isEmpty()) {
                    auto proposed = m_compensations.propose({CompensationKind::FreezeCoupon,
                                                             order.orderNo,
                                                             findingId,
                                                             QStringLiteral("patrol:freeze_coupon:%1:%2")
                                                                 .arg(order.orderNo, joinIds(result.extraCouponIds)),
                                                             kActor,
                                                             QStringLiteral("extra active coupon(s) %1 on order %2")
                                                                 .arg(joinIds(result.extraCouponIds), order.orderNo),
                                                             {},
                                                             {},
                                                             {}},
                                                            nowMs);
                    if (!proposed)
                        return proposed.error();
                }
                if (result.extraPoints > 0) {
                    auto proposed = m_compensations.propose(
                        {CompensationKind::ReversePoints,
                         order.orderNo,
                         findingId,
                         QStringLiteral("patrol:reverse_points:%1:%2:%3")
                             .arg(order.orderNo)
                             .arg(result.extraPoints)
                             .arg(result.lastPointId),
                         kActor,
                         QStringLiteral("%1 extra points on order %2").arg(result.extraPoints).arg(order.orderNo),
                         {},
                         {},
                         {}},
                        nowMs);
                    if (!proposed)
                        return proposed.error();
                }
            }
            if (!order.hasPaidEvent) {
                auto raised = m_store.raiseFinding(
                    {QStringLiteral("missing_outbox"), QStringLiteral("order:") + order.orderNo, order.orderNo,
                     order.payNo,
                     QJsonObject{{QStringLiteral("expected"),
                                  QJsonObject{{QStringLiteral("event_id"),
                                               QString(QStringLiteral("order.paid:") + order.orderNo)}}},
                                 {QStringLiteral("found"), QJsonValue::Null}}},
                    nowMs);
                if (!raised)
                    return raised.error();
                found.append(raised.value());
            }
        }
        if (page.value().size() < kPageSize)
            break;
    }
    return {};
}

Result<QList<StoredFinding>> Patrol::runOnce(qint64 nowMs)
{
    bool acceptOnly = false;
    if (m_settlement.modes) {
        auto mode = m_settlement.modes->mode();
        if (!mode)
            return mode.error();
        acceptOnly = mode.value().mode == CallbackMode::AcceptOnly;
    }
    QList<StoredFinding> found;
    // Stuck payments first: an order finished here is then checked with the PAID ones.
    if (auto done = checkStuckPaying(nowMs, acceptOnly, found); !done)
        return done.error();
    if (auto done = checkPaidOrders(nowMs, found); !done)
        return done.error();
    if (auto done = checkPaymentAnomalies(nowMs, found); !done)
        return done.error();
    // double_payment findings, the callback path's included, are backed by a processed
    // log row the patrol sees every run until the payment is refunded in full.
    QStringList kinds{QStringLiteral("effect_mismatch"), QStringLiteral("missing_outbox"),
                      QStringLiteral("stuck_paying"), QStringLiteral("double_payment")};
    if (!acceptOnly) {
        // In accept-only mode `accepted` rows wait on purpose: neither raised nor resolved.
        if (auto done = checkStuckAccepted(nowMs, found); !done)
            return done.error();
        kinds.append(QStringLiteral("stuck_accepted"));
    }
    auto resolved = m_store.resolveNotSeenSince(kinds, nowMs, nowMs);
    if (!resolved)
        return resolved.error();
    // Open findings are seen again on every run: only a new one is news.
    if (m_events) {
        for (const StoredFinding &f : std::as_const(found)) {
            if (f.seenCount == 1)
                m_events(findingRaisedEvent(f.kind, f.subject, f.orderNo, f.payNo, f.evidence, kActor));
        }
    }
    return found;
}

Result<void> Patrol::checkStuckPaying(qint64 nowMs, bool acceptOnly, QList<StoredFinding> &found)
{
    if (m_options.stuckPayingAfterMs <= 0)
        return {};
    // One page per run: a backlog drains over the next runs, each order asked once per run.
    auto stuck = m_store.stuckPaying(nowMs - m_options.stuckPayingAfterMs, kPageSize);
    if (!stuck)
        return stuck.error();
    for (const StuckPayingOrder &order : stuck.value()) {
        QJsonObject evidence = settleStuckOrder(order, acceptOnly, nowMs);
        evidence.insert(QStringLiteral("paying_since_ms"), order.payingSinceMs);
        evidence.insert(QStringLiteral("paying_for_ms"), nowMs - order.payingSinceMs);
        evidence.insert(QStringLiteral("amount_fen"), order.amountFen);
        auto raised = m_store.raiseFinding({QStringLiteral("stuck_paying"), QStringLiteral("order:") + order.orderNo,
                                            order.orderNo, evidence.value(QStringLiteral("pay_no")).toString(),
                                            evidence},
                                           nowMs);
        if (!raised)
            return raised.error();
        found.append(raised.value());
    }
    return {};
}

QJsonObject Patrol::settleStuckOrder(const StuckPayingOrder &order, bool acceptOnly, qint64 nowMs)
{
    StuckPayingSettlement settlement(order, m_settlement, m_store, nowMs);
    if (!m_settlement.gateways || !m_settlement.callbacks)
        return settlement.verdict(QStringLiteral("left"), QStringLiteral("this patrol has no gateways to ask"));
    if (acceptOnly)
        return settlement.verdict(QStringLiteral("left"), QStringLiteral("callbacks are in accept-only mode"));
    // Nothing to ask about: usually the order was paid between the two reads; otherwise an
    // inconsistency an operator must look at — never a reason to revert blindly.
    if (order.attempts.isEmpty())
        return settlement.verdict(QStringLiteral("left"), QStringLiteral("no open payment attempt for this order"));
    return settlement.run();
}

Result<void> Patrol::checkPaymentAnomalies(qint64 nowMs, QList<StoredFinding> &found)
{
    qint64 after = 0;
    for (;;) {
        qint64 last = after;
        auto page = m_store.paymentAnomalies(after, kPageSize, &last);
        if (!page)
            return page.error();
        for (const PaymentAnomaly &payment : page.value()) {
            const QString subject = channelName(payment.channel) + QLatin1Char(':') + payment.payNo;
            const bool keptByOrder = payment.orderStatus != QLatin1String("CLOSED")
                                     && payment.orderPayNo == payment.payNo;
            if (payment.amountFen != payment.orderAmountFen) {
                auto raised = m_store.raiseFinding(
                    {QStringLiteral("amount_mismatch"), subject, payment.orderNo, payment.payNo,
                     QJsonObject{{QStringLiteral("field"), QStringLiteral("amount")},
                                 {QStringLiteral("order_amount_fen"), payment.orderAmountFen},
                                 {QStringLiteral("notified_amount_fen"), payment.amountFen},
                                 {QStringLiteral("found_by"), QStringLiteral("patrol")}}},
                    nowMs);
                if (!raised)
                    return raised.error();
                found.append(raised.value());
            }
            if (keptByOrder)
                continue;
            auto raised = m_store.raiseFinding({QStringLiteral("double_payment"), subject, payment.orderNo,
                                                payment.payNo,
                                                QJsonObject{{QStringLiteral("order_status"), payment.orderStatus},
                                                            {QStringLiteral("paid_pay_no"), payment.orderPayNo},
                                                            {QStringLiteral("pay_no"), payment.payNo},
                                                            {QStringLiteral("channel"), channelName(payment.channel)},
                                                            {QStringLiteral("amount_fen"), payment.amountFen},
                                                            {QStringLiteral("proposal"), QStringLiteral("refund")}}},
                                               nowMs);
            if (!raised)
                return raised.error();
            found.append(raised.value());
            auto proposed = m_compensations.propose(
                {CompensationKind::Refund,
                 payment.orderNo,
                 raised.value().id,
                 QStringLiteral("patrol:refund:") + subject,
                 kActor,
                 QStringLiteral("payment %1 (%2 fen) on order %3, which is %4")
                     .arg(payment.payNo)
                     .arg(payment.amountFen)
                     .arg(payment.orderNo, payment.orderStatus == QLatin1String("CLOSED")
                                               ? QStringLiteral("CLOSED")
                                               : QStringLiteral("paid by %1").arg(payment.orderPayNo)),
                 payment.payNo,
                 payment.amountFen,
                 {}},
                nowMs);
            // A refund the refund rules refuse to propose (no payment record of that channel
            // for the order, an order's own payment on an order no longer PAID) leaves the
            // finding open for the desk; it never stops the run.
            if (!proposed
                && (proposed.error().code == ErrorCode::InvalidInput || proposed.error().code == ErrorCode::Conflict))
                qCWarning(payonce::lcCore).noquote()
                    << "patrol: refund for" << subject << "not proposed:" << proposed.error().internalMessage;
            else if (!proposed)
                return proposed.error();
        }
        if (page.value().size() < kPageSize)
            break;
        after = last;
    }
    return {};
}

Result<void> Patrol::checkStuckAccepted(qint64 nowMs, QList<StoredFinding> &found)
{
    if (m_options.stuckAcceptedAfterMs <= 0)
        return {};
    auto rows = m_store.stuckAccepted(nowMs - m_options.stuckAcceptedAfterMs, kPageSize);
    if (!rows)
        return rows.error();
    for (const StuckAcceptedRow &row : rows.value()) {
        const QJsonObject evidence{{QStringLiteral("channel"), channelName(row.channel)},
                                   {QStringLiteral("pay_no"), row.payNo},
                                   {QStringLiteral("order_status"), row.orderStatus},
                                   {QStringLiteral("has_delivery"), row.hasDelivery},
                                   {QStringLiteral("accepted_at_ms"), row.createdAtMs},
                                   {QStringLiteral("accepted_for_ms"), nowMs - row.createdAtMs}};
        auto raised = m_store.raiseFinding({QStringLiteral("stuck_accepted"),
                                            channelName(row.channel) + QLatin1Char(':') + row.payNo, row.orderNo,
                                            row.payNo, evidence},
                                           nowMs);
        if (!raised)
            return raised.error();
        found.append(raised.value());
    }
    return {};
}

} // namespace payonce::core
