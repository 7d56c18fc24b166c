#pragma once

#include <QMap>
#include <QString>
#include <QStringList>

namespace payonce::sql {
class Database;
}

namespace payonce::testsupport {

/// What the database says about a run of orders (every order_no starting with a prefix),
/// read by SQL alone — the same truth the QA report is computed from, without the agent's
/// help. Every order of the run was paid at the platform (its trade settled there), so
/// each must end PAID exactly once: one paid payment record, one stock_log row, one
/// coupon, one points entry, one processed callback-log row, one order.paid event,
/// delivered; no callback row left `accepted`, no outbox event dead, no finding raised.
struct PaidOnceReport {
    qint64 orders = 0;
    qint64 paid = 0;
    qint64 paidPayments = 0;
    qint64 stockRows = 0;
    qint64 couponRows = 0;
    qint64 pointRows = 0;
    qint64 processedLogRows = 0;
    qint64 acceptedLogRows = 0;
    qint64 paidEvents = 0;
    qint64 eventsPending = 0;
    qint64 eventsDead = 0;
    qint64 findings = 0;
    qint64 deliveries = 0;
    QMap<QString, qint64> deliveriesByLayer; ///< callback_deliveries.layer → rows
    /// "<order_no>: <what is wrong>", one line per offending order and rule.
    QStringList violations;

    bool holds() const { return violations.isEmpty(); }
    /// Nothing is still in motion: no order short of PAID, no accepted row, no pending
    /// event. A run that is settled and still violates an invariant will stay so.
    bool settled() const { return paid == orders && acceptedLogRows == 0 && eventsPending == 0; }
    /// The counts on one line, then the layer counts, then every violation.
    QString describe() const;
};

/// Reads the report for the orders whose order_no starts with `orderPrefix` (which must
/// contain no LIKE wildcard). `expectedOrders` is how many the platform settled: fewer
/// rows in `orders` is a lost order too. Runs on the calling thread.
PaidOnceReport checkPaidOnce(sql::Database &database, const QString &orderPrefix, qint64 expectedOrders);

} // namespace payonce::testsupport
