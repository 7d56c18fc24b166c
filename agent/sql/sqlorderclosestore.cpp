#include "sqlorderclosestore.h"

#include "sqlauditwriter.h"

#include "core/ports/auditwriter.h"

namespace payonce::sql {

core::Result<QList<core::ExpiredOrder>> SqlOrderCloseStore::expiredPending(qint64 updatedBeforeMs,
                                                                           const core::ExpiredOrderCursor &after,
                                                                           int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::ExpiredOrder>> {
        // Keyset paging on (updated_at, order_no): orders left PENDING by this run stay in
        // the set and must not be listed again. orders_status_updated serves it.
        auto query = session.exec(QStringLiteral("SELECT order_no, amount_fen, version, updated_at FROM orders "
                                                 "WHERE status = 'PENDING' AND updated_at < ? "
                                                 "AND (updated_at > ? OR (updated_at = ? AND order_no > ?)) "
                                                 "ORDER BY updated_at, order_no LIMIT %1")
                                      .arg(limit),
                                  {updatedBeforeMs, after.updatedAtMs, after.updatedAtMs, after.orderNo},
                                  QStringLiteral("closer: expired PENDING orders"));
        if (!query)
            return query.error();
        QList<core::ExpiredOrder> orders;
        while (query.value().next()) {
            core::ExpiredOrder order;
            order.orderNo = query.value().value(0).toString();
            order.amountFen = query.value().value(1).toLongLong();
            order.version = query.value().value(2).toLongLong();
            order.pendingSinceMs = query.value().value(3).toLongLong();
            orders.append(order);
        }
        for (core::ExpiredOrder &order : orders) {
            auto trades = session.exec(
                QStringLiteral("SELECT payment_no, channel, status FROM payment_records "
                               "WHERE order_no = ? AND status NOT IN ('paid', 'closed') ORDER BY id"),
                {order.orderNo}, QStringLiteral("closer: open trades"));
            if (!trades)
                return trades.error();
            while (trades.value().next()) {
                const auto channel = core::channelFromName(trades.value().value(1).toString());
                if (!channel)
                    continue; // the CHECK constraint makes this impossible
                order.trades.append({trades.value().value(0).toString(), *channel, trades.value().value(2).toString()});
            }
            auto waiting = session.exec(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log "
                                                       "WHERE order_no = ? AND status = 'accepted'"),
                                        {order.orderNo}, QStringLiteral("closer: waiting callbacks"));
            if (!waiting)
                return waiting.error();
            order.callbackWaiting = waiting.value().next() && waiting.value().value(0).toLongLong() > 0;
        }
        return orders;
    });
}

core::Result<bool> SqlOrderCloseStore::closeExpired(const core::ExpiredOrder &order, const core::AuditEntry &audit,
                                                    qint64 nowMs)
{
    bool movedOn = false;
    SqlAuditWriter auditWriter(m_database);
    auto closed = m_database.write([&](Session &session) -> core::Result<void> {
        movedOn = false;
        const core::Error rollback = core::Error::make(core::ErrorCode::Conflict,
                                                       QStringLiteral("the order moved on; close rolled back"));
        // The CAS: still PENDING at the version listed (no confirm, revert or payment since),
        // and no payment durable as an `accepted` row waiting for the worker.
        auto moved = session.execAffected(
            QStringLiteral("UPDATE orders SET status = 'CLOSED', version = version + 1, closed_at = ?, updated_at = ? "
                           "WHERE order_no = ? AND status = 'PENDING' AND version = ? AND NOT EXISTS "
                           "(SELECT 1 FROM pay_callback_log l WHERE l.order_no = ? AND l.status = 'accepted')"),
            {nowMs, nowMs, order.orderNo, order.version, order.orderNo},
            QStringLiteral("closer: order PENDING -> CLOSED"));
        if (!moved)
            return moved.error();
        if (moved.value() != 1) {
            movedOn = true;
            return rollback;
        }
        for (const core::ExpiredOrder::Trade &trade : order.trades) {
            auto record = session.execAffected(
                QStringLiteral("UPDATE payment_records SET status = 'closed', updated_at = ? "
                               "WHERE payment_no = ? AND order_no = ? AND status NOT IN ('paid', 'closed')"),
                {nowMs, trade.paymentNo, order.orderNo}, QStringLiteral("closer: payment record closed"));
            if (!record)
                return record.error();
            if (record.value() != 1) {
                movedOn = true;
                return rollback;
            }
        }
        // A record this closer did not close at its platform must not end up under a CLOSED order.
        auto open = session.exec(QStringLiteral("SELECT COUNT(*) FROM payment_records "
                                                "WHERE order_no = ? AND status NOT IN ('paid', 'closed')"),
                                 {order.orderNo}, QStringLiteral("closer: records left open"));
        if (!open)
            return open.error();
        if (open.value().next() && open.value().value(0).toLongLong() != 0) {
            movedOn = true;
            return rollback;
        }
        auto audited = auditWriter.append(audit); // joins this transaction
        if (!audited)
            return audited.error();
        return {};
    });
    if (closed)
        return true;
    if (movedOn)
        return false;
    return closed.error();
}

} // namespace payonce::sql
