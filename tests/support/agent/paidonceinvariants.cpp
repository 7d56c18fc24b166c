#include "paidonceinvariants.h"

#include "sql/database.h"
#include "sql/session.h"

#include <QSqlQuery>

namespace payonce::testsupport {

namespace {

// One row per order of the run with everything it is owed, counted where it is written.
// Correlated subqueries on the unique keys (the same SQL on PostgreSQL and MariaDB).
const char *const kPerOrder =
    "SELECT o.order_no, o.status,"
    " (SELECT COUNT(*) FROM payment_records p WHERE p.order_no = o.order_no AND p.status = 'paid'),"
    " (SELECT COUNT(*) FROM stock_log s WHERE s.order_no = o.order_no),"
    " (SELECT COUNT(*) FROM user_coupon c WHERE c.order_no = o.order_no),"
    " (SELECT COUNT(*) FROM point_log pl WHERE pl.order_no = o.order_no),"
    " (SELECT COUNT(*) FROM pay_callback_log l WHERE l.order_no = o.order_no AND l.status = 'processed'),"
    " (SELECT COUNT(*) FROM pay_callback_log l WHERE l.order_no = o.order_no AND l.status = 'accepted'),"
    " (SELECT COUNT(*) FROM outbox e WHERE e.aggregate_id = o.order_no AND e.event_type = 'order.paid'),"
    " (SELECT COUNT(*) FROM outbox e WHERE e.aggregate_id = o.order_no AND e.status = 'pending'),"
    " (SELECT COUNT(*) FROM outbox e WHERE e.aggregate_id = o.order_no AND e.status = 'dead'),"
    " (SELECT COUNT(*) FROM findings f WHERE f.order_no = o.order_no),"
    " (SELECT COUNT(*) FROM callback_deliveries d WHERE d.order_no = o.order_no AND d.error_code = 'processed')"
    " FROM orders o WHERE o.order_no LIKE ? ORDER BY o.order_no";

enum Column {
    OrderNo,
    Status,
    PaidPayments,
    Stock,
    Coupons,
    Points,
    Processed,
    Accepted,
    Events,
    Pending,
    Dead,
    Findings,
    FirstProcessings
};

struct Rule {
    Column column;
    const char *what;
};
// Each must be exactly 1 for a PAID order.
constexpr Rule kExactlyOnce[] = {
    {PaidPayments, "paid payment records"},
    {Stock, "stock_log rows"},
    {Coupons, "user_coupon rows"},
    {Points, "point_log rows"},
    {Processed, "processed callback-log rows"},
    {Events, "order.paid events"},
};
// Each must be 0.
constexpr Rule kNever[] = {
    {Accepted, "callback-log rows still accepted"},
    {Pending, "outbox events still pending"},
    {Dead, "outbox events dead"},
    {Findings, "findings"},
};

} // namespace

QString PaidOnceReport::describe() const
{
    QString text = QStringLiteral("orders %1, PAID %2, paid payments %3, stock_log %4, user_coupon %5, point_log %6, "
                                  "processed log rows %7, accepted log rows %8, order.paid events %9 (pending %10, "
                                  "dead %11), findings %12; deliveries %13 by layer:")
                       .arg(orders)
                       .arg(paid)
                       .arg(paidPayments)
                       .arg(stockRows)
                       .arg(couponRows)
                       .arg(pointRows)
                       .arg(processedLogRows)
                       .arg(acceptedLogRows)
                       .arg(paidEvents)
                       .arg(eventsPending)
                       .arg(eventsDead)
                       .arg(findings)
                       .arg(deliveries);
    for (auto it = deliveriesByLayer.begin(); it != deliveriesByLayer.end(); ++it)
        text += QStringLiteral(" %1=%2").arg(it.key()).arg(it.value());
    if (!violations.isEmpty())
        text += QStringLiteral("\nviolations (%1):\n  ").arg(violations.size())
                + violations.join(QStringLiteral("\n  "));
    return text;
}

PaidOnceReport checkPaidOnce(sql::Database &database, const QString &orderPrefix, qint64 expectedOrders)
{
    PaidOnceReport report;
    const QVariantList like{QVariant(orderPrefix + u'%')};
    auto read = database.read([&](sql::Session &session) -> core::Result<void> {
        auto rows = session.exec(QString::fromLatin1(kPerOrder), like);
        if (!rows)
            return rows.error();
        QSqlQuery &q = rows.value();
        while (q.next()) {
            const QString orderNo = q.value(OrderNo).toString();
            const QString status = q.value(Status).toString();
            ++report.orders;
            if (status == u"PAID")
                ++report.paid;
            else
                report.violations << QStringLiteral("%1: %2, not PAID (lost)").arg(orderNo, status);
            report.paidPayments += q.value(PaidPayments).toLongLong();
            report.stockRows += q.value(Stock).toLongLong();
            report.couponRows += q.value(Coupons).toLongLong();
            report.pointRows += q.value(Points).toLongLong();
            report.processedLogRows += q.value(Processed).toLongLong();
            report.acceptedLogRows += q.value(Accepted).toLongLong();
            report.paidEvents += q.value(Events).toLongLong();
            report.eventsPending += q.value(Pending).toLongLong();
            report.eventsDead += q.value(Dead).toLongLong();
            report.findings += q.value(Findings).toLongLong();
            for (const Rule &rule : kExactlyOnce) {
                if (const qint64 n = q.value(rule.column).toLongLong(); n != 1)
                    report.violations << QStringLiteral("%1: %2 %3, owed exactly 1")
                                             .arg(orderNo)
                                             .arg(n)
                                             .arg(QLatin1String(rule.what));
            }
            for (const Rule &rule : kNever) {
                if (const qint64 n = q.value(rule.column).toLongLong(); n != 0)
                    report.violations << QStringLiteral("%1: %2 %3").arg(orderNo).arg(n).arg(QLatin1String(rule.what));
            }
            // The worker finishes a row without a delivery of its own, so a paid order may
            // have no delivery decided "processed" — but never two.
            if (const qint64 n = q.value(FirstProcessings).toLongLong(); n > 1)
                report.violations << QStringLiteral("%1: %2 deliveries processed as the first").arg(orderNo).arg(n);
        }
        auto layers = session.exec(
            QStringLiteral("SELECT layer, COUNT(*) FROM callback_deliveries WHERE order_no LIKE ? "
                           "GROUP BY layer"),
            like);
        if (!layers)
            return layers.error();
        while (layers.value().next()) {
            const qint64 n = layers.value().value(1).toLongLong();
            report.deliveriesByLayer.insert(layers.value().value(0).toString(), n);
            report.deliveries += n;
        }
        return {};
    });
    if (!read.ok())
        report.violations << QStringLiteral("the database could not be read: ") + read.error().internalMessage;
    if (report.orders != expectedOrders)
        report.violations << QStringLiteral(
                                 "%1 orders found for %2 settled by the platform (lost before they were stored)")
                                 .arg(report.orders)
                                 .arg(expectedOrders);
    return report;
}

} // namespace payonce::testsupport
