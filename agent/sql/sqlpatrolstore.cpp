#include "sqlpatrolstore.h"

#include "sqlfindings.h"

namespace payonce::sql {

namespace {

core::Result<void> readEffects(Session &session, core::PaidOrderEffects &order)
{
    const QVariantList key{order.orderNo};
    auto items = session.exec(QStringLiteral("SELECT sku_id, qty FROM order_items WHERE order_no = ? ORDER BY sku_id"),
                              key, QStringLiteral("patrol: items"));
    if (!items)
        return items.error();
    while (items.value().next())
        order.items.append({items.value().value(0).toString(), items.value().value(1).toLongLong()});

    auto coupons = session.exec(
        QStringLiteral("SELECT id, template_id, status FROM user_coupon WHERE order_no = ? ORDER BY id"), key,
        QStringLiteral("patrol: coupons"));
    if (!coupons)
        return coupons.error();
    while (coupons.value().next()) {
        order.coupons.append({coupons.value().value(0).toLongLong(), coupons.value().value(1).toString(),
                              coupons.value().value(2).toString()});
    }

    auto points = session.exec(
        QStringLiteral("SELECT id, point_type, delta FROM point_log WHERE order_no = ? ORDER BY id"), key,
        QStringLiteral("patrol: points"));
    if (!points)
        return points.error();
    while (points.value().next()) {
        order.points.append({points.value().value(0).toLongLong(), points.value().value(1).toString(),
                             points.value().value(2).toLongLong()});
    }

    auto stock = session.exec(QStringLiteral("SELECT id, sku_id, qty FROM stock_log WHERE order_no = ? ORDER BY id"),
                              key, QStringLiteral("patrol: stock"));
    if (!stock)
        return stock.error();
    while (stock.value().next()) {
        order.stock.append({stock.value().value(0).toLongLong(), stock.value().value(1).toString(),
                            stock.value().value(2).toLongLong()});
    }

    auto outbox = session.exec(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_id = ?"),
                               {QString(QStringLiteral("order.paid:") + order.orderNo)}, QStringLiteral("patrol: outbox"));
    if (!outbox)
        return outbox.error();
    order.hasPaidEvent = outbox.value().next() && outbox.value().value(0).toLongLong() > 0;
    return {};
}

} // namespace

core::Result<QList<core::PaidOrderEffects>> SqlPatrolStore::paidOrders(const QString &afterOrderNo, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::PaidOrderEffects>> {
        // A null QString binds as NULL (order_no > NULL matches nothing): the first page has no bound.
        const bool first = afterOrderNo.isEmpty();
        auto query = session.exec(
            QStringLiteral("SELECT order_no, user_id, pay_no, reward_coupon_template, reward_points FROM orders "
                           "WHERE status = 'PAID'%1 ORDER BY order_no LIMIT %2")
                .arg(first ? QString() : QStringLiteral(" AND order_no > ?"))
                .arg(limit),
            first ? QVariantList{} : QVariantList{afterOrderNo}, QStringLiteral("patrol: paid orders"));
        if (!query)
            return query.error();
        QList<core::PaidOrderEffects> orders;
        QSqlQuery &q = query.value();
        while (q.next()) {
            core::PaidOrderEffects order;
            order.orderNo = q.value(0).toString();
            order.userId = q.value(1).toLongLong();
            order.payNo = q.value(2).toString();
            order.rewardCouponTemplate = q.value(3).toString();
            order.rewardPoints = q.value(4).toLongLong();
            orders.append(order);
        }
        for (auto &order : orders) {
            auto read = readEffects(session, order);
            if (!read)
                return read.error();
        }
        return orders;
    });
}

core::Result<core::StoredFinding> SqlPatrolStore::raiseFinding(const core::Finding &finding, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<core::StoredFinding> {
        auto id = upsertFinding(session, finding, nowMs);
        if (!id)
            return id.error();
        return readFinding(session, id.value());
    });
}

core::Result<int> SqlPatrolStore::resolveNotSeenSince(const QStringList &kinds, qint64 seenSinceMs, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<int> {
        return resolveFindingsNotSeenSince(session, kinds, seenSinceMs, nowMs);
    });
}

} // namespace payonce::sql
