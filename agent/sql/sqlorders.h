#pragma once

#include "database.h"

#include "core/orders/orderstatus.h"
#include "core/orders/transitionoutcome.h"

namespace payonce::sql {

struct NewOrder {
    QString orderNo;
    qint64 userId = 0;
    qint64 amountFen = 0;
    QString currency = QStringLiteral("CNY");
    QString rewardCouponTemplate; ///< empty: none
    qint64 rewardPoints = 0;
    struct Item {
        QString skuId;
        qint64 qty = 0;
    };
    QList<Item> items;
};

struct OrderRow {
    QString orderNo;
    qint64 userId = 0;
    qint64 amountFen = 0;
    core::OrderStatus status = core::OrderStatus::Pending;
    qint64 version = 0;
    qint64 fence = 0;
};

using core::TransitionOutcome;

/// The orders table. Every write to an order is a single statement that carries both its
/// guard and its fencing check (docs/design.md rules 2 and 3):
///   UPDATE orders SET … , fence = ?, version = version + 1
///   WHERE order_no = ? AND status = ? AND fence <= ?
/// The affected-row count decides; nothing is read first. Methods taking a Session run in
/// the caller's transaction.
class SqlOrders {
public:
    explicit SqlOrders(Database &database) : m_database(database) {}

    /// Creates a PENDING order with its items in one transaction. Duplicate when order_no
    /// exists (decided by the primary key through insert-if-absent); nothing is written then.
    core::Result<void> create(const NewOrder &order);

    /// The state-machine CAS from -> to, fenced. An edge the state machine does not allow
    /// is refused with InvalidInput before any SQL runs. When 0 rows change, the order is
    /// read once to tell Lost from StaleFence (for the caller's answer and the counter) —
    /// the decision itself was already made by the UPDATE.
    core::Result<TransitionOutcome> transition(Session &session, const QString &orderNo, core::OrderStatus from,
                                               core::OrderStatus to, qint64 fence);

    /// A fenced write that changes no business column: records `fence` as the order's
    /// latest token. Refused (StaleFence) when the order already carries a newer token.
    core::Result<TransitionOutcome> recordFence(Session &session, const QString &orderNo, qint64 fence);

    std::optional<OrderRow> find(Session &session, const QString &orderNo, core::Error *error = nullptr);

private:
    core::Result<TransitionOutcome> explainZeroRows(Session &session, const QString &orderNo, qint64 fence);

    Database &m_database;
};

} // namespace payonce::sql
