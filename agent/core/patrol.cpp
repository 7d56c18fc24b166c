#include "patrol.h"

#include <QJsonArray>
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
        out.evidence.insert(QStringLiteral("coupons"),
                            QJsonObject{{QStringLiteral("expected"),
                                         QJsonObject{{QStringLiteral("template_id"), order.rewardCouponTemplate},
                                                     {QStringLiteral("active"),
                                                      order.rewardCouponTemplate.isEmpty() ? 0 : 1}}},
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
        out.evidence.insert(QStringLiteral("points"),
                            QJsonObject{{QStringLiteral("expected"), order.rewardPoints},
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

Result<QList<StoredFinding>> Patrol::runOnce(qint64 nowMs)
{
    QList<StoredFinding> found;
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
                    auto proposed = m_compensations.propose(
                        {CompensationKind::FreezeCoupon, order.orderNo, findingId,
                         QStringLiteral("patrol:freeze_coupon:%1:%2").arg(order.orderNo, joinIds(result.extraCouponIds)),
                         kActor,
                         QStringLiteral("extra active coupon(s) %1 on order %2")
                             .arg(joinIds(result.extraCouponIds), order.orderNo)},
                        nowMs);
                    if (!proposed)
                        return proposed.error();
                }
                if (result.extraPoints > 0) {
                    auto proposed = m_compensations.propose(
                        {CompensationKind::ReversePoints, order.orderNo, findingId,
                         QStringLiteral("patrol:reverse_points:%1:%2:%3")
                             .arg(order.orderNo)
                             .arg(result.extraPoints)
                             .arg(result.lastPointId),
                         kActor,
                         QStringLiteral("%1 extra points on order %2").arg(result.extraPoints).arg(order.orderNo)},
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
                                  QJsonObject{{QStringLiteral("event_id"), QString(QStringLiteral("order.paid:") + order.orderNo)}}},
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
    auto resolved = m_store.resolveNotSeenSince({QStringLiteral("effect_mismatch"), QStringLiteral("missing_outbox")},
                                                nowMs, nowMs);
    if (!resolved)
        return resolved.error();
    return found;
}

} // namespace payonce::core
