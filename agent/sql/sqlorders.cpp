#include "sqlorders.h"

#include "dialectsql.h"

#include "core/orders/orderstatemachine.h"

namespace payonce::sql {

using core::Error;
using core::ErrorCode;
using core::OrderStatus;

core::Result<void> SqlOrders::create(const NewOrder &order)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        const qint64 now = session.nowMs();
        // Insert-if-absent, not a plain INSERT: a duplicate is then an affected-row count of
        // 0 rather than an error, which on PostgreSQL would abort the transaction (and make
        // the driver complain while freeing its statements) before write() rolls it back.
        const QStringList columns{QStringLiteral("order_no"),      QStringLiteral("user_id"),
                                  QStringLiteral("amount_fen"),    QStringLiteral("currency"),
                                  QStringLiteral("status"),        QStringLiteral("version"),
                                  QStringLiteral("fence"),         QStringLiteral("reward_coupon_template"),
                                  QStringLiteral("reward_points"), QStringLiteral("created_at"),
                                  QStringLiteral("updated_at")};
        auto inserted = session.execAffected(
            insertIfAbsentSql(session.dialect(), QStringLiteral("orders"), columns, QStringLiteral("order_no")),
            {order.orderNo, order.userId, order.amountFen, order.currency, QStringLiteral("PENDING"), 0, 0,
             order.rewardCouponTemplate.isEmpty() ? QVariant(QMetaType(QMetaType::QString))
                                                  : QVariant(order.rewardCouponTemplate),
             order.rewardPoints, now, now},
            QStringLiteral("insert order"));
        if (!inserted)
            return inserted.error();
        if (inserted.value() == 0)
            return Error::make(ErrorCode::Duplicate, QStringLiteral("order %1 exists").arg(order.orderNo),
                               QStringLiteral("already exists"));
        for (const NewOrder::Item &item : order.items) {
            auto line = session.exec(QStringLiteral("INSERT INTO order_items (order_no, sku_id, qty) VALUES (?, ?, ?)"),
                                     {order.orderNo, item.skuId, item.qty}, QStringLiteral("insert order item"));
            if (!line)
                return line.error();
        }
        return {};
    });
}

core::Result<TransitionOutcome> SqlOrders::transition(Session &session, const QString &orderNo, OrderStatus from,
                                                      OrderStatus to, qint64 fence)
{
    if (!core::OrderStateMachine::isAllowed(from, to)) {
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("the order state machine has no edge %1 -> %2")
                                                        .arg(core::orderStatusName(from), core::orderStatusName(to)));
    }
    const qint64 now = session.nowMs();
    auto affected = session.execAffected(
        QStringLiteral("UPDATE orders SET status = ?, version = version + 1, fence = ?, updated_at = ? "
                       "WHERE order_no = ? AND status = ? AND fence <= ?"),
        {core::orderStatusName(to), fence, now, orderNo, core::orderStatusName(from), fence},
        QStringLiteral("order CAS"));
    if (!affected)
        return affected.error();
    if (affected.value() == 1)
        return TransitionOutcome::Transitioned;
    return explainZeroRows(session, orderNo, fence);
}

core::Result<TransitionOutcome> SqlOrders::recordFence(Session &session, const QString &orderNo, qint64 fence)
{
    auto affected = session.execAffected(
        QStringLiteral("UPDATE orders SET fence = ?, version = version + 1, updated_at = ? "
                       "WHERE order_no = ? AND fence <= ?"),
        {fence, session.nowMs(), orderNo, fence}, QStringLiteral("fenced order write"));
    if (!affected)
        return affected.error();
    if (affected.value() == 1)
        return TransitionOutcome::Transitioned;
    return explainZeroRows(session, orderNo, fence);
}

core::Result<TransitionOutcome> SqlOrders::explainZeroRows(Session &session, const QString &orderNo, qint64 fence)
{
    Error error;
    const auto row = find(session, orderNo, &error);
    if (!row)
        return error.code == ErrorCode::NotFound ? core::Result<TransitionOutcome>(TransitionOutcome::NotFound)
                                                 : core::Result<TransitionOutcome>(error);
    return row->fence > fence ? TransitionOutcome::StaleFence : TransitionOutcome::Lost;
}

std::optional<OrderRow> SqlOrders::find(Session &session, const QString &orderNo, Error *error)
{
    auto query = session.exec(
        QStringLiteral("SELECT order_no, user_id, amount_fen, status, version, fence FROM orders WHERE order_no = ?"),
        {orderNo}, QStringLiteral("read order"));
    if (!query) {
        if (error)
            *error = query.error();
        return std::nullopt;
    }
    QSqlQuery &q = query.value();
    if (!q.next()) {
        if (error)
            *error = Error::make(ErrorCode::NotFound, QStringLiteral("order %1 not found").arg(orderNo));
        return std::nullopt;
    }
    const auto status = core::orderStatusFromName(q.value(3).toString());
    if (!status) {
        if (error)
            *error = Error::make(
                ErrorCode::Internal,
                QStringLiteral("order %1 has an unknown status %2").arg(orderNo, q.value(3).toString()));
        return std::nullopt;
    }
    return OrderRow{q.value(0).toString(),   q.value(1).toLongLong(), q.value(2).toLongLong(), *status,
                    q.value(4).toLongLong(), q.value(5).toLongLong()};
}

} // namespace payonce::sql
