#include "sqlpatrolstore.h"

#include "sqlfindings.h"
#include "sqlrefunds.h"

namespace payonce::sql {

namespace {

core::Result<void> readEffects(Session &session, core::PaidOrderEffects &order)
{
    const QVariantList key{order.orderNo};
    // What the order is owed: its items and points less what its partial refunds took back.
    // Read first: a query run while another's rows are being read may end that one (the
    // PostgreSQL driver streams rows one at a time).
    auto partial = partialRefundsOf(session, order.orderNo);
    if (!partial)
        return partial.error();
    auto items = session.exec(QStringLiteral("SELECT sku_id, qty FROM order_items WHERE order_no = ? ORDER BY sku_id"),
                              key, QStringLiteral("patrol: items"));
    if (!items)
        return items.error();
    while (items.value().next()) {
        const QString sku = items.value().value(0).toString();
        const qint64 owed = items.value().value(1).toLongLong() - partial.value().items.value(sku);
        if (owed > 0)
            order.items.append({sku, owed});
    }
    order.rewardPoints = core::pointsStillOwed(order.rewardPoints, partial.value().refundedFen,
                                               partial.value().paidFen);

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
                               {QString(QStringLiteral("order.paid:") + order.orderNo)},
                               QStringLiteral("patrol: outbox"));
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

core::Result<QList<core::StuckPayingOrder>> SqlPatrolStore::stuckPaying(qint64 updatedBeforeMs, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::StuckPayingOrder>> {
        auto query = session.exec(QStringLiteral("SELECT order_no, amount_fen, updated_at FROM orders "
                                                 "WHERE status = 'PAYING' AND updated_at < ? "
                                                 "ORDER BY updated_at, order_no LIMIT %1")
                                      .arg(limit),
                                  {updatedBeforeMs}, QStringLiteral("patrol: stuck PAYING orders"));
        if (!query)
            return query.error();
        QList<core::StuckPayingOrder> orders;
        while (query.value().next()) {
            core::StuckPayingOrder order;
            order.orderNo = query.value().value(0).toString();
            order.amountFen = query.value().value(1).toLongLong();
            order.payingSinceMs = query.value().value(2).toLongLong();
            orders.append(order);
        }
        for (core::StuckPayingOrder &order : orders) {
            auto attempts = session.exec(
                QStringLiteral("SELECT payment_no, channel, status, amount_fen FROM payment_records "
                               "WHERE order_no = ? AND status IN ('creating', 'pending') ORDER BY id"),
                {order.orderNo}, QStringLiteral("patrol: open payment attempts"));
            if (!attempts)
                return attempts.error();
            while (attempts.value().next()) {
                const auto channel = core::channelFromName(attempts.value().value(1).toString());
                if (!channel)
                    continue; // the CHECK constraint makes this impossible
                order.attempts.append({attempts.value().value(0).toString(), *channel,
                                       attempts.value().value(2).toString(), attempts.value().value(3).toLongLong()});
            }
        }
        return orders;
    });
}

core::Result<bool> SqlPatrolStore::revertPaying(const QString &orderNo,
                                                const QList<QPair<QString, QString>> &renumbered,
                                                const QString &lastError, qint64 nowMs,
                                                const core::InTransaction &audit)
{
    bool movedOn = false;
    auto reverted = m_database.write([&](Session &session) -> core::Result<void> {
        movedOn = false;
        const core::Error rollback = core::Error::make(core::ErrorCode::Conflict,
                                                       QStringLiteral("the order moved on; revert rolled back"));
        for (const auto &[from, to] : renumbered) {
            auto failed = session.execAffected(
                QStringLiteral(
                    "UPDATE payment_records SET payment_no = ?, status = 'failed', last_error = ?, "
                    "updated_at = ? WHERE payment_no = ? AND order_no = ? AND status IN ('creating', 'pending')"),
                {to, lastError.left(500), nowMs, from, orderNo}, QStringLiteral("patrol: close payment attempt"));
            if (!failed)
                return failed.error();
            if (failed.value() != 1) {
                movedOn = true;
                return rollback;
            }
        }
        auto moved = session.execAffected(QStringLiteral("UPDATE orders SET status = 'PENDING', version = version + 1, "
                                                         "updated_at = ? WHERE order_no = ? AND status = 'PAYING'"),
                                          {nowMs, orderNo}, QStringLiteral("patrol: order PAYING -> PENDING"));
        if (!moved)
            return moved.error();
        if (moved.value() != 1) {
            movedOn = true;
            return rollback;
        }
        return audit ? audit() : core::Result<void>();
    });
    if (reverted)
        return true;
    if (movedOn)
        return false;
    return reverted.error();
}

core::Result<QList<core::PaymentAnomaly>> SqlPatrolStore::paymentAnomalies(qint64 afterLogId, int limit,
                                                                           qint64 *lastLogId)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::PaymentAnomaly>> {
        // A payment that paid nothing it can keep: the order is PAID (or refunded) by
        // another pay_no, or CLOSED; or the amount differs from the order's — unless the
        // payment has been refunded in full.
        auto query = session.exec(
            QStringLiteral(
                "SELECT l.id, l.channel, l.pay_no, l.order_no, l.amount_fen, o.status, o.pay_no, o.amount_fen "
                "FROM pay_callback_log l JOIN orders o ON o.order_no = l.order_no "
                "WHERE l.status = 'processed' AND l.id > ? AND ("
                "(o.status IN ('PAID', 'REFUNDING', 'REFUNDED') AND (o.pay_no IS NULL OR o.pay_no <> l.pay_no)) "
                "OR o.status = 'CLOSED' OR l.amount_fen <> o.amount_fen) "
                // Given back in full: no longer money received twice.
                "AND l.amount_fen > (SELECT COALESCE(SUM(r.amount_fen), 0) FROM refunds r "
                "WHERE r.pay_no = l.pay_no AND r.status = 'succeeded') "
                "ORDER BY l.id LIMIT %1")
                .arg(limit),
            {afterLogId}, QStringLiteral("patrol: payment anomalies"));
        if (!query)
            return query.error();
        QList<core::PaymentAnomaly> rows;
        QSqlQuery &q = query.value();
        while (q.next()) {
            *lastLogId = q.value(0).toLongLong();
            const auto channel = core::channelFromName(q.value(1).toString());
            if (!channel)
                continue; // the CHECK constraint makes this impossible
            rows.append({*channel, q.value(2).toString(), q.value(3).toString(), q.value(4).toLongLong(),
                         q.value(5).toString(), q.value(6).toString(), q.value(7).toLongLong()});
        }
        return rows;
    });
}

core::Result<QList<core::StuckAcceptedRow>> SqlPatrolStore::stuckAccepted(qint64 createdBeforeMs, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::StuckAcceptedRow>> {
        auto query = session.exec(
            QStringLiteral("SELECT l.channel, l.pay_no, l.order_no, o.status, l.delivery_id, l.created_at "
                           "FROM pay_callback_log l LEFT JOIN orders o ON o.order_no = l.order_no "
                           "WHERE l.status = 'accepted' AND l.created_at < ? ORDER BY l.created_at, l.id LIMIT %1")
                .arg(limit),
            {createdBeforeMs}, QStringLiteral("patrol: stuck accepted rows"));
        if (!query)
            return query.error();
        QList<core::StuckAcceptedRow> rows;
        QSqlQuery &q = query.value();
        while (q.next()) {
            const auto channel = core::channelFromName(q.value(0).toString());
            if (!channel)
                continue; // the CHECK constraint makes this impossible
            rows.append({*channel, q.value(1).toString(), q.value(2).toString(), q.value(3).toString(),
                         !q.value(4).isNull(), q.value(5).toLongLong()});
        }
        return rows;
    });
}

core::Result<int> SqlPatrolStore::resolveNotSeenSince(const QStringList &kinds, qint64 seenSinceMs, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<int> {
        return resolveFindingsNotSeenSince(session, kinds, seenSinceMs, nowMs);
    });
}

} // namespace payonce::sql
