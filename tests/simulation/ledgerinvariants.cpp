#include "ledgerinvariants.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QSqlQuery>

namespace payonce::simulation {

using core::Error;
using core::ErrorCode;

namespace {

/// " WHERE <column> IN (?, ?, ...)" for the orders, or "" for every order.
QString whereIn(const QString &column, const QStringList &orders, QVariantList &binds, const QString &joiner)
{
    if (orders.isEmpty())
        return {};
    QStringList marks;
    for (const QString &o : orders) {
        marks << QStringLiteral("?");
        binds << o;
    }
    return QStringLiteral(" %1 %2 IN (%3)").arg(joiner, column, marks.join(QStringLiteral(", ")));
}

bool paidLike(const QString &status)
{
    return status == u"PAID" || status == u"REFUNDING";
}

/// Whether the state machine leads from one status to the other, in one edge or several
/// (an operation may pass REFUNDING on its way to REFUNDED between two checks).
bool reachable(const QString &from, const QString &to)
{
    static const QHash<QString, QStringList> edges{
        {QStringLiteral("PENDING"), {QStringLiteral("PAYING"), QStringLiteral("PAID"), QStringLiteral("CLOSED")}},
        {QStringLiteral("PAYING"), {QStringLiteral("PENDING"), QStringLiteral("PAID")}},
        {QStringLiteral("PAID"), {QStringLiteral("REFUNDING")}},
        {QStringLiteral("REFUNDING"), {QStringLiteral("PAID"), QStringLiteral("REFUNDED")}},
    };
    QSet<QString> seen{from};
    QStringList frontier{from};
    while (!frontier.isEmpty()) {
        const QString at = frontier.takeFirst();
        for (const QString &next : edges.value(at)) {
            if (next == to)
                return true;
            if (!seen.contains(next)) {
                seen.insert(next);
                frontier.append(next);
            }
        }
    }
    return false;
}

struct OrderRow {
    QString status;
    QString payNo;
    QString paidChannel;
    QString couponTemplate;
    qint64 rewardPoints = 0;
};

struct LogRow {
    QString channel;
    QString payNo;
    QString orderNo;
    QString status;
    qint64 amountFen = 0;
};

struct RefundRow {
    QString refundNo;
    QString orderNo;
    QString payNo;
    qint64 amountFen = 0;
    QString status;
    bool own = false;
    bool partial = false;
    qint64 totalFen = 0;
    QMap<QString, qint64> items; // sku → qty given back by a partial refund
};

/// The partial-refund rule of docs/design.md, written out here again so the check does not
/// lean on the code it checks: after refunds of R of a payment of P, floor(reward × R / P)
/// points have been taken back.
qint64 pointsTakenBackAfter(qint64 rewardPoints, qint64 refundedFen, qint64 paidFen)
{
    if (paidFen <= 0)
        return 0;
    return rewardPoints * std::min(refundedFen, paidFen) / paidFen; // sim amounts: no overflow
}

QMap<QString, qint64> itemsOf(const QString &text)
{
    QMap<QString, qint64> out;
    const QJsonObject o = QJsonDocument::fromJson(text.toUtf8()).object();
    for (auto it = o.begin(); it != o.end(); ++it)
        out[it.key()] += it.value().toInteger();
    return out;
}

} // namespace

QStringList LedgerInvariants::ordersIn(const QString &status) const
{
    QStringList out;
    for (auto it = m_lastStatus.cbegin(); it != m_lastStatus.cend(); ++it) {
        if (it.value() == status)
            out << it.key();
    }
    out.sort();
    return out;
}

QString LedgerInvariants::ownerOf(const QString &ledgerOrderNo) const
{
    if (ledgerOrderNo.startsWith(u"reversal:"))
        return m_compensationOrder.value(ledgerOrderNo);
    if (ledgerOrderNo.startsWith(u"refund:"))
        return m_refundOrder.value(ledgerOrderNo);
    return ledgerOrderNo;
}

core::Result<void> LedgerInvariants::readLedger(sql::Session &session)
{
    // stock_log is append-only: only the rows written since the last check are read.
    auto rows = session.exec(QStringLiteral("SELECT id, order_no, sku_id, qty FROM stock_log WHERE id > ? ORDER BY id"),
                             {m_ledgerSeenId}, QStringLiteral("sim: stock ledger"));
    if (!rows)
        return rows.error();
    struct Entry {
        qint64 id;
        QString orderNo, sku;
        qint64 qty;
    };
    QList<Entry> entries;
    while (rows.value().next())
        entries.append({rows.value().value(0).toLongLong(), rows.value().value(1).toString(),
                        rows.value().value(2).toString(), rows.value().value(3).toLongLong()});
    for (const Entry &e : std::as_const(entries)) {
        if (e.orderNo.startsWith(u"reversal:") && !m_compensationOrder.contains(e.orderNo)) {
            auto c = session.exec(QStringLiteral("SELECT order_no FROM compensations WHERE id = ?"),
                                  {e.orderNo.mid(9).toLongLong()}, QStringLiteral("sim: reversal owner"));
            if (!c)
                return c.error();
            m_compensationOrder.insert(e.orderNo, c.value().next() ? c.value().value(0).toString() : QString());
        } else if (e.orderNo.startsWith(u"refund:") && !m_refundOrder.contains(e.orderNo)) {
            auto r = session.exec(QStringLiteral("SELECT order_no FROM refunds WHERE refund_no = ?"),
                                  {e.orderNo.mid(7)}, QStringLiteral("sim: refund owner"));
            if (!r)
                return r.error();
            m_refundOrder.insert(e.orderNo, r.value().next() ? r.value().value(0).toString() : QString());
        }
        const QString owner = ownerOf(e.orderNo);
        m_netByOrder[owner][e.sku] += e.qty;
        if (e.qty > 0)
            m_takenByOrder[owner][e.sku] += e.qty;
        m_ledgerBySku[e.sku] += e.qty;
        m_ledgerSeenId = e.id;
    }
    return {};
}

std::optional<Violation> LedgerInvariants::check(sql::Database &database, const QStringList &orders)
{
    std::optional<Violation> found;
    auto fail = [&](const QString &invariant, const QString &message) {
        if (!found)
            found = Violation{invariant, message};
    };
    auto read = database.read([&](sql::Session &session) -> core::Result<void> {
        if (auto ledger = readLedger(session); !ledger)
            return ledger.error();

        // stock-ledger: what left the shelves is what the ledger says.
        auto skus = session.exec(QStringLiteral("SELECT sku_id, stock FROM skus ORDER BY sku_id"), {},
                                 QStringLiteral("sim: skus"));
        if (!skus)
            return skus.error();
        while (skus.value().next()) {
            const QString sku = skus.value().value(0).toString();
            const qint64 stock = skus.value().value(1).toLongLong();
            const qint64 initial = m_initialStock.value(sku);
            if (stock < 0)
                fail(QStringLiteral("stock-ledger"),
                     QStringLiteral("sku %1 stock is negative (%2)").arg(sku).arg(stock));
            if (initial - stock != m_ledgerBySku.value(sku))
                fail(QStringLiteral("stock-ledger"),
                     QStringLiteral("sku %1: started at %2, now %3, so %4 left the shelf, but stock_log nets %5")
                         .arg(sku)
                         .arg(initial)
                         .arg(stock)
                         .arg(initial - stock)
                         .arg(m_ledgerBySku.value(sku)));
        }

        QVariantList binds;
        const QString where = whereIn(QStringLiteral("order_no"), orders, binds, QStringLiteral("WHERE"));
        auto orderRows = session.exec(QStringLiteral("SELECT order_no, status, pay_no, paid_channel, "
                                                     "reward_coupon_template, reward_points FROM orders")
                                          + where + QStringLiteral(" ORDER BY order_no"),
                                      binds, QStringLiteral("sim: orders"));
        if (!orderRows)
            return orderRows.error();
        QMap<QString, OrderRow> byOrder;
        while (orderRows.value().next()) {
            OrderRow row;
            row.status = orderRows.value().value(1).toString();
            row.payNo = orderRows.value().value(2).toString();
            row.paidChannel = orderRows.value().value(3).toString();
            row.couponTemplate = orderRows.value().value(4).toString();
            row.rewardPoints = orderRows.value().value(5).toLongLong();
            byOrder.insert(orderRows.value().value(0).toString(), row);
        }
        const QStringList scope = byOrder.keys();
        if (scope.isEmpty())
            return {};
        auto each = [&](const QString &sql, const std::function<void(const QSqlQuery &)> &row) -> core::Result<void> {
            QVariantList b;
            const QString w = whereIn(QStringLiteral("order_no"), scope, b,
                                      sql.contains(QStringLiteral(" WHERE ")) ? QStringLiteral("AND")
                                                                              : QStringLiteral("WHERE"));
            QString text = sql;
            const int groupAt = text.indexOf(QStringLiteral(" GROUP BY"));
            if (groupAt >= 0)
                text.insert(groupAt, w);
            else
                text += w;
            auto q = session.exec(text, b, QStringLiteral("sim: invariant read"));
            if (!q)
                return q.error();
            while (q.value().next())
                row(q.value());
            return {};
        };

        // Items never change: read once per order.
        QStringList unknownItems;
        for (const QString &o : scope) {
            if (!m_items.contains(o))
                unknownItems << o;
        }
        if (!unknownItems.isEmpty()) {
            QVariantList b;
            auto q = session.exec(QStringLiteral("SELECT order_no, sku_id, qty FROM order_items")
                                      + whereIn(QStringLiteral("order_no"), unknownItems, b, QStringLiteral("WHERE")),
                                  b, QStringLiteral("sim: items"));
            if (!q)
                return q.error();
            for (const QString &o : unknownItems)
                m_items[o];
            while (q.value().next())
                m_items[q.value().value(0).toString()][q.value().value(1).toString()] +=
                    q.value().value(2).toLongLong();
        }

        QHash<QString, QMap<QString, int>> coupons; // order → "template/status" → count
        QHash<QString, qint64> points;
        QHash<QString, qint64> paidEvents;
        QHash<QString, QList<LogRow>> logRows;
        QSet<QString> findings; // "kind|subject"
        QHash<QString, QList<RefundRow>> refunds;
        QHash<QString, int> paidRecords;
        QList<QStringList> compensations; // id, order, status, proposed_by, decided_by
        auto r = each(QStringLiteral("SELECT order_no, template_id, status FROM user_coupon"), [&](const QSqlQuery &q) {
            coupons[q.value(0).toString()][q.value(1).toString() + QLatin1Char('/') + q.value(2).toString()] += 1;
        });
        if (r)
            r = each(QStringLiteral("SELECT order_no, SUM(delta) FROM point_log GROUP BY order_no"),
                     [&](const QSqlQuery &q) { points[q.value(0).toString()] = q.value(1).toLongLong(); });
        if (r) {
            QVariantList b;
            auto q = session.exec(
                QStringLiteral("SELECT aggregate_id, COUNT(*) FROM outbox WHERE event_type = 'order.paid'")
                    + whereIn(QStringLiteral("aggregate_id"), scope, b, QStringLiteral("AND"))
                    + QStringLiteral(" GROUP BY aggregate_id"),
                b, QStringLiteral("sim: order.paid events"));
            if (!q)
                return q.error();
            while (q.value().next())
                paidEvents[q.value().value(0).toString()] = q.value().value(1).toLongLong();
        }
        if (r)
            r = each(QStringLiteral("SELECT channel, pay_no, order_no, status, amount_fen FROM pay_callback_log"),
                     [&](const QSqlQuery &q) {
                         logRows[q.value(2).toString()].append({q.value(0).toString(), q.value(1).toString(),
                                                                q.value(2).toString(), q.value(3).toString(),
                                                                q.value(4).toLongLong()});
                     });
        if (r)
            r = each(QStringLiteral("SELECT kind, subject FROM findings"), [&](const QSqlQuery &q) {
                findings.insert(q.value(0).toString() + QLatin1Char('|') + q.value(1).toString());
            });
        if (r)
            r = each(
                QStringLiteral("SELECT refund_no, order_no, pay_no, amount_fen, status, own_payment, partial_refund, "
                               "total_fen, refund_items FROM refunds"),
                [&](const QSqlQuery &q) {
                    refunds[q.value(1).toString()].append(
                        {q.value(0).toString(), q.value(1).toString(), q.value(2).toString(), q.value(3).toLongLong(),
                         q.value(4).toString(), q.value(5).toInt() == 1, q.value(6).toInt() == 1,
                         q.value(7).toLongLong(), itemsOf(q.value(8).toString())});
                });
        if (r)
            r = each(QStringLiteral("SELECT order_no FROM payment_records WHERE status = 'paid'"),
                     [&](const QSqlQuery &q) { paidRecords[q.value(0).toString()] += 1; });
        if (r)
            r = each(QStringLiteral("SELECT id, order_no, status, proposed_by, decided_by FROM compensations"),
                     [&](const QSqlQuery &q) {
                         compensations.append({q.value(0).toString(), q.value(1).toString(), q.value(2).toString(),
                                               q.value(3).toString(), q.value(4).toString()});
                     });
        if (!r)
            return r.error();

        for (auto it = byOrder.cbegin(); it != byOrder.cend(); ++it) {
            const QString &o = it.key();
            const OrderRow &row = it.value();
            const bool owes = paidLike(row.status);

            // order-transition
            const QString before = m_lastStatus.value(o);
            if (!before.isEmpty() && before != row.status && !reachable(before, row.status))
                fail(QStringLiteral("order-transition"),
                     QStringLiteral("order %1 went %2 -> %3, which the state machine does not allow")
                         .arg(o, before, row.status));
            const QString payBefore = m_lastPayNo.value(o);
            if (!payBefore.isEmpty() && row.payNo != payBefore)
                fail(QStringLiteral("order-transition"),
                     QStringLiteral("order %1 was paid by %2, now says %3").arg(o, payBefore, row.payNo));
            m_lastStatus.insert(o, row.status);
            if (!row.payNo.isEmpty())
                m_lastPayNo.insert(o, row.payNo);

            // What the partial refunds of its own payment that succeeded gave back: no longer owed.
            qint64 partlyRefundedFen = 0, paidFen = 0;
            QMap<QString, qint64> refundedItems;
            for (const RefundRow &rf : refunds.value(o)) {
                if (!rf.own || !rf.partial)
                    continue;
                if (row.status != u"PAID" && row.status != u"REFUNDING" && row.status != u"REFUNDED")
                    fail(QStringLiteral("partial-refund"),
                         QStringLiteral("order %1 is %2 with partial refund %3").arg(o, row.status, rf.refundNo));
                if (rf.status != u"succeeded")
                    continue;
                partlyRefundedFen += rf.amountFen;
                paidFen = rf.totalFen;
                for (auto i = rf.items.cbegin(); i != rf.items.cend(); ++i)
                    refundedItems[i.key()] += i.value();
            }

            // stock-per-order and effects-owed: stock
            const QMap<QString, qint64> items = m_items.value(o);
            QSet<QString> orderSkus(items.keyBegin(), items.keyEnd());
            const QMap<QString, qint64> net = m_netByOrder.value(o);
            for (auto n = net.cbegin(); n != net.cend(); ++n)
                orderSkus.insert(n.key());
            QStringList sortedSkus(orderSkus.begin(), orderSkus.end());
            sortedSkus.sort();
            for (const QString &sku : std::as_const(sortedSkus)) {
                const qint64 have = net.value(sku);
                const qint64 taken = m_takenByOrder.value(o).value(sku);
                if (have < 0)
                    fail(QStringLiteral("stock-per-order"),
                         QStringLiteral("order %1 gave back %2 of %3 but took %4 (net %5)")
                             .arg(o)
                             .arg(taken - have)
                             .arg(sku)
                             .arg(taken)
                             .arg(have));
                if (have > items.value(sku))
                    fail(QStringLiteral("stock-per-order"), QStringLiteral("order %1 holds %2 of %3, its items say %4")
                                                                .arg(o)
                                                                .arg(have)
                                                                .arg(sku)
                                                                .arg(items.value(sku)));
                const qint64 owed = owes ? items.value(sku) - refundedItems.value(sku) : 0;
                const bool oversold = have == 0
                                      && findings.contains(QStringLiteral("oversold|") + o + QLatin1Char(':') + sku);
                if (have != owed && !(owes && oversold))
                    fail(QStringLiteral("effects-owed"),
                         QStringLiteral("order %1 is %2: owes %3 of %4, the ledger holds %5 for it")
                             .arg(o, row.status)
                             .arg(owed)
                             .arg(sku)
                             .arg(have));
            }
            // coupons: kept by a PAID order whatever part of it was refunded
            const QMap<QString, int> c = coupons.value(o);
            int activeOwed = 0, activeOther = 0;
            for (auto k = c.cbegin(); k != c.cend(); ++k) {
                if (!k.key().endsWith(u"/active"))
                    continue;
                if (!row.couponTemplate.isEmpty() && k.key() == row.couponTemplate + QStringLiteral("/active"))
                    activeOwed += k.value();
                else
                    activeOther += k.value();
            }
            const int couponOwed = owes && !row.couponTemplate.isEmpty() ? 1 : 0;
            if (activeOwed != couponOwed || activeOther != 0)
                fail(QStringLiteral("effects-owed"),
                     QStringLiteral("order %1 is %2: owes %3 active coupon(s) of '%4', has %5 (and %6 other active)")
                         .arg(o, row.status)
                         .arg(couponOwed)
                         .arg(row.couponTemplate)
                         .arg(activeOwed)
                         .arg(activeOther));
            // points
            const qint64 pointsOwed =
                owes ? row.rewardPoints - pointsTakenBackAfter(row.rewardPoints, partlyRefundedFen, paidFen) : 0;
            if (points.value(o) != pointsOwed)
                fail(QStringLiteral("effects-owed"), QStringLiteral("order %1 is %2: owes %3 points, point_log nets %4")
                                                         .arg(o, row.status)
                                                         .arg(pointsOwed)
                                                         .arg(points.value(o)));
            // the event and the processed payment
            const bool wasPaid = owes || row.status == u"REFUNDED";
            if (paidEvents.value(o) != (wasPaid ? 1 : 0))
                fail(QStringLiteral("effects-owed"), QStringLiteral("order %1 is %2 with %3 order.paid event(s)")
                                                         .arg(o, row.status)
                                                         .arg(paidEvents.value(o)));
            if (paidRecords.value(o) > (wasPaid ? 1 : 0))
                fail(QStringLiteral("effects-owed"), QStringLiteral("order %1 is %2 with %3 paid payment record(s)")
                                                         .arg(o, row.status)
                                                         .arg(paidRecords.value(o)));
            bool ownRowProcessed = false;
            for (const LogRow &l : logRows.value(o)) {
                if (l.payNo == row.payNo && l.channel == row.paidChannel && l.status == u"processed")
                    ownRowProcessed = true;
            }
            if (wasPaid && !ownRowProcessed)
                fail(QStringLiteral("effects-owed"),
                     QStringLiteral("order %1 is %2 by %3, which has no processed callback log row")
                         .arg(o, row.status, row.payNo));

            // double-payment and refund-total
            QHash<QString, qint64> refundedByPay;
            for (const RefundRow &rf : refunds.value(o)) {
                if (rf.status != u"failed")
                    refundedByPay[rf.payNo] += rf.amountFen;
            }
            for (const LogRow &l : logRows.value(o)) {
                if (l.status != u"processed")
                    continue;
                const bool paysOrder = wasPaid && l.payNo == row.payNo && l.channel == row.paidChannel;
                if (!paysOrder
                    && !findings.contains(QStringLiteral("double_payment|") + l.channel + QLatin1Char(':') + l.payNo)
                    && !refundedByPay.contains(l.payNo))
                    fail(QStringLiteral("double-payment"),
                         QStringLiteral("payment %1:%2 of %3 fen for order %4 (%5, paid by '%6') has no double_payment "
                                        "finding and no refund")
                             .arg(l.channel, l.payNo)
                             .arg(l.amountFen)
                             .arg(o, row.status, row.payNo));
                if (refundedByPay.value(l.payNo) > l.amountFen)
                    fail(QStringLiteral("refund-total"),
                         QStringLiteral("payment %1 of %2 fen has %3 fen of refunds that "
                                        "have not failed")
                             .arg(l.payNo)
                             .arg(l.amountFen)
                             .arg(refundedByPay.value(l.payNo)));
            }
            // refund-books
            bool ownSucceeded = false;
            for (const RefundRow &rf : refunds.value(o)) {
                const PlatformRefund *at = m_platform.findRefund(rf.refundNo);
                const bool paidOut = at && at->state == core::GatewayRefundState::Success;
                if (paidOut && rf.status == u"failed")
                    fail(QStringLiteral("refund-books"),
                         QStringLiteral("refund %1 of order %2: the platform paid %3 fen back, our books say failed")
                             .arg(rf.refundNo, o)
                             .arg(rf.amountFen));
                if (!paidOut && rf.status == u"succeeded")
                    fail(QStringLiteral("refund-books"),
                         QStringLiteral(
                             "refund %1 of order %2 is succeeded in our books, the platform paid nothing back")
                             .arg(rf.refundNo, o));
                if (rf.own && rf.status == u"succeeded")
                    ownSucceeded = true;
            }
            if (row.status == u"REFUNDED" && !ownSucceeded)
                fail(QStringLiteral("refund-books"),
                     QStringLiteral("order %1 is REFUNDED without a succeeded refund").arg(o));
            // A REFUNDED order got its whole payment back, in one refund or in parts.
            if (row.status == u"REFUNDED") {
                qint64 ownBack = 0, ownPaid = 0;
                for (const RefundRow &rf : refunds.value(o)) {
                    if (rf.own && rf.status == u"succeeded")
                        ownBack += rf.amountFen;
                }
                for (const LogRow &l : logRows.value(o)) {
                    if (l.payNo == row.payNo && l.channel == row.paidChannel && l.status == u"processed")
                        ownPaid = l.amountFen;
                }
                if (ownBack != ownPaid)
                    fail(QStringLiteral("refund-books"),
                         QStringLiteral("order %1 is REFUNDED with %2 fen of its %3 given back")
                             .arg(o)
                             .arg(ownBack)
                             .arg(ownPaid));
            }
        }

        // four-eyes and audit, over the compensations of these orders
        QHash<QString, QMap<QString, qint64>> auditByTarget;
        if (!compensations.isEmpty()) {
            auto audit = session.exec(QStringLiteral("SELECT target, action, COUNT(*) FROM audit_log WHERE target LIKE "
                                                     "'compensation:%' GROUP BY target, action"),
                                      {}, QStringLiteral("sim: audit"));
            if (!audit)
                return audit.error();
            while (audit.value().next())
                auditByTarget[audit.value().value(0).toString()].insert(audit.value().value(1).toString(),
                                                                        audit.value().value(2).toLongLong());
        }
        for (const QStringList &c : std::as_const(compensations)) {
            const QString &id = c[0], &order = c[1], &status = c[2], &proposer = c[3], &decider = c[4];
            if (!decider.isEmpty() && decider == proposer)
                fail(QStringLiteral("four-eyes"),
                     QStringLiteral("compensation %1 of order %2 was proposed and decided (%3) by %4")
                         .arg(id, order, status, proposer));
            const QMap<QString, qint64> actions = auditByTarget.value(QStringLiteral("compensation:") + id);
            QMap<QString, qint64> expected{{QStringLiteral("compensation.propose"), 1}};
            if (status == u"approved" || status == u"executed" || status == u"failed")
                expected.insert(QStringLiteral("compensation.approve"), 1);
            if (status == u"executed" || status == u"failed")
                expected.insert(QStringLiteral("compensation.execute"), 1);
            if (status == u"rejected")
                expected.insert(QStringLiteral("compensation.reject"), 1);
            if (actions != expected) {
                QStringList seen;
                for (auto a = actions.cbegin(); a != actions.cend(); ++a)
                    seen << QStringLiteral("%1 x%2").arg(a.key()).arg(a.value());
                fail(QStringLiteral("audit"), QStringLiteral("compensation %1 (%2) has audit rows [%3]")
                                                  .arg(id, status, seen.join(QStringLiteral(", "))));
            }
        }
        return {};
    });
    if (!read)
        return Violation{QStringLiteral("storage"),
                         QStringLiteral("the invariants could not be read: %1").arg(read.error().internalMessage)};
    return found;
}

std::optional<Violation> LedgerInvariants::checkNothingAccepted(sql::Database &database)
{
    std::optional<Violation> found;
    auto read = database.read([&](sql::Session &session) -> core::Result<void> {
        QSet<QString> stuck;
        auto open = session.exec(QStringLiteral("SELECT subject FROM findings WHERE kind = 'stuck_accepted' AND "
                                                "status = 'open'"),
                                 {}, QStringLiteral("sim: stuck_accepted findings"));
        if (!open)
            return open.error();
        while (open.value().next())
            stuck.insert(open.value().value(0).toString());
        auto q = session.exec(QStringLiteral("SELECT channel, pay_no, order_no, delivery_id FROM pay_callback_log "
                                             "WHERE status = 'accepted' ORDER BY id"),
                              {}, QStringLiteral("sim: accepted rows"));
        if (!q)
            return q.error();
        while (!found && q.value().next()) {
            const QString subject = q.value().value(0).toString() + QLatin1Char(':') + q.value().value(1).toString();
            if (stuck.contains(subject))
                continue;
            found = Violation{
                QStringLiteral("accepted-finished"),
                QStringLiteral("callback log row %1 of order %2 (delivery %3) is still accepted after "
                               "the worker and the patrol ran, with no open stuck_accepted finding")
                    .arg(subject, q.value().value(2).toString(),
                         q.value().value(3).isNull() ? QStringLiteral("none") : q.value().value(3).toString())};
        }
        return {};
    });
    if (!read)
        return Violation{QStringLiteral("storage"), read.error().internalMessage};
    return found;
}

namespace {

/// An effect_mismatch on `order:<order_no>` that says only that stock is missing, each SKU
/// with none held, where the payment raised `oversold` for that order and SKU: the order was
/// paid while the SKU was sold out, which effects-owed allows, so the patrol's finding is
/// the same fact seen from the ledger, not something unexplained.
bool explainedByOversold(const QString &subject, const QString &evidence, const QSet<QString> &oversold)
{
    if (!subject.startsWith(QLatin1String("order:")))
        return false;
    const QString orderNo = subject.mid(6);
    const QJsonObject e = QJsonDocument::fromJson(evidence.toUtf8()).object();
    const QJsonArray stock = e.value(QStringLiteral("stock")).toArray();
    if (e.size() != 1 || stock.isEmpty())
        return false;
    for (const QJsonValue &entry : stock) {
        const QJsonObject s = entry.toObject();
        if (s.value(QStringLiteral("found")).toInteger(-1) != 0
            || !oversold.contains(orderNo + QLatin1Char(':') + s.value(QStringLiteral("sku_id")).toString()))
            return false;
    }
    return true;
}

} // namespace

std::optional<Violation> LedgerInvariants::checkPatrolQuiet(sql::Database &database)
{
    std::optional<Violation> found;
    auto read = database.read([&](sql::Session &session) -> core::Result<void> {
        QSet<QString> oversold; // order_no:sku_id
        auto sold = session.exec(QStringLiteral("SELECT subject FROM findings WHERE kind = 'oversold'"), {},
                                 QStringLiteral("sim: oversold findings"));
        if (!sold)
            return sold.error();
        while (sold.value().next())
            oversold.insert(sold.value().value(0).toString());
        auto q = session.exec(
            QStringLiteral("SELECT kind, subject, evidence FROM findings WHERE status = 'open' AND kind IN "
                           "('effect_mismatch', 'missing_outbox') ORDER BY id"),
            {}, QStringLiteral("sim: patrol findings"));
        if (!q)
            return q.error();
        while (!found && q.value().next()) {
            if (q.value().value(0).toString() == u"effect_mismatch"
                && explainedByOversold(q.value().value(1).toString(), q.value().value(2).toString(), oversold))
                continue;
            found = Violation{
                QStringLiteral("patrol-quiet"),
                QStringLiteral("the final patrol found %1 %2 (%3), which no invariant explained")
                    .arg(q.value().value(0).toString(), q.value().value(1).toString(), q.value().value(2).toString())};
        }
        return {};
    });
    if (!read)
        return Violation{QStringLiteral("storage"), read.error().internalMessage};
    return found;
}

} // namespace payonce::simulation
