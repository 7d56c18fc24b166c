#include "sqlrefunds.h"

#include "dialectsql.h"

#include "core/qa/mutants.h"

namespace payonce::sql {

using core::Error;
using core::ErrorCode;
using core::RefundRecord;

QString refundColumns()
{
    return QStringLiteral("refund_no, compensation_id, order_no, channel, pay_no, payment_no, amount_fen, total_fen, "
                          "own_payment, status, platform_refund_id, attempts, last_error, updated_at, partial_refund, "
                          "refund_items");
}

core::Result<RefundRecord> refundFromRow(const QSqlQuery &q)
{
    RefundRecord r;
    r.refundNo = q.value(0).toString();
    r.compensationId = q.value(1).toLongLong();
    r.orderNo = q.value(2).toString();
    const auto channel = core::channelFromName(q.value(3).toString());
    const auto status = core::refundStatusFromName(q.value(9).toString());
    if (!channel || !status)
        return Error::make(ErrorCode::Internal,
                           QStringLiteral("refund %1 has an unknown channel or status").arg(r.refundNo));
    r.channel = *channel;
    r.payNo = q.value(4).toString();
    r.paymentNo = q.value(5).toString();
    r.amountFen = q.value(6).toLongLong();
    r.totalFen = q.value(7).toLongLong();
    r.ownPayment = q.value(8).toInt() == 1;
    r.status = *status;
    r.platformRefundId = q.value(10).toString();
    r.attempts = q.value(11).toLongLong();
    r.lastError = q.value(12).toString();
    r.updatedAtMs = q.value(13).toLongLong();
    r.partial = q.value(14).toInt() == 1;
    r.items = core::refundItemsFromText(q.value(15).toString());
    return r;
}

core::Result<std::optional<RefundRecord>> readRefund(Session &session, const QString &refundNo)
{
    auto query = session.exec(QStringLiteral("SELECT %1 FROM refunds WHERE refund_no = ?").arg(refundColumns()),
                              {refundNo}, QStringLiteral("read refund"));
    if (!query)
        return query.error();
    if (!query.value().next())
        return std::optional<RefundRecord>();
    auto row = refundFromRow(query.value());
    if (!row)
        return row.error();
    return std::optional<RefundRecord>(row.value());
}

namespace {

Error invalid(const QString &contractCode, const QString &why)
{
    Error error = Error::make(ErrorCode::InvalidInput, why, why);
    return contractCode.isEmpty() ? error : error.withContractCode(contractCode);
}

Error conflict(const QString &contractCode, const QString &why)
{
    return Error::make(ErrorCode::Conflict, why, why).withContractCode(contractCode);
}

/// What a refund would be, decided from the rows as they are: the payment, the amount, and
/// whether it is a partial refund of the order's own payment.
struct RefundPlan {
    core::Channel channel = core::Channel::WeChat;
    QString channelText;
    QString payNo;
    QString paymentNo;
    qint64 paidFen = 0;
    qint64 amountFen = 0;
    bool own = false;
    bool partial = false;
};

/// The items the order bought, less those of its refunds that have not failed.
core::Result<core::RefundItems> itemsLeftOf(Session &session, const QString &orderNo)
{
    core::RefundItems left;
    auto bought = session.exec(QStringLiteral("SELECT sku_id, qty FROM order_items WHERE order_no = ?"), {orderNo},
                               QStringLiteral("items bought"));
    if (!bought)
        return bought.error();
    while (bought.value().next())
        left[bought.value().value(0).toString()] += bought.value().value(1).toLongLong();
    auto refunded = session.exec(QStringLiteral("SELECT refund_items FROM refunds WHERE order_no = ? "
                                                "AND status <> 'failed' AND refund_items IS NOT NULL"),
                                 {orderNo}, QStringLiteral("items refunded"));
    if (!refunded)
        return refunded.error();
    while (refunded.value().next()) {
        const core::RefundItems items = core::refundItemsFromText(refunded.value().value(0).toString());
        for (auto it = items.cbegin(); it != items.cend(); ++it)
            left[it.key()] -= it.value();
    }
    return left;
}

/// The checks of CompensationTransaction::requestRefund, in order. With `lock`, the
/// payment's callback-log row is locked before anything is summed and stays locked until
/// COMMIT, so two approvals of refunds of one payment sum what the other recorded (READ
/// COMMITTED: the sums below run after the lock is ours).
namespace {

/// The request itself: a positive amount, items of at least one each.
core::Result<void> checkRefundRequest(std::optional<qint64> wantedFen, const core::RefundItems &items)
{
    if (wantedFen && *wantedFen <= 0)
        return invalid(QStringLiteral("invalid_amount"), QStringLiteral("a refund's amount must be positive"));
    for (auto it = items.cbegin(); it != items.cend(); ++it) {
        if (it.value() <= 0)
            return invalid({}, QStringLiteral("the qty of %1 must be at least 1").arg(it.key()));
    }
    return {};
}

/// The payment refunded (the order's own unless named) and whether the order can give it back.
core::Result<void> planPayment(Session &session, const QString &orderNo, const QString &wantedPayNo,
                               std::optional<qint64> wantedFen, const core::RefundItems &items, RefundPlan &plan)
{
    auto order = session.exec(QStringLiteral("SELECT status, pay_no FROM orders WHERE order_no = ?"), {orderNo},
                              QStringLiteral("order to refund"));
    if (!order)
        return order.error();
    if (!order.value().next())
        return Error::make(ErrorCode::NotFound, QStringLiteral("no order %1").arg(orderNo))
            .withContractCode(QStringLiteral("order_not_found"));
    const QString orderStatus = order.value().value(0).toString();
    const QString orderPayNo = order.value().value(1).toString();
    plan.payNo = wantedPayNo.isEmpty() ? orderPayNo : wantedPayNo;
    plan.own = !plan.payNo.isEmpty() && plan.payNo == orderPayNo;
    if (plan.payNo.isEmpty() || (plan.own && orderStatus != u"PAID")) {
        return conflict(
            QStringLiteral("order_not_refundable"),
            QStringLiteral("order %1 is %2, not PAID: its payment cannot be refunded").arg(orderNo, orderStatus));
    }
    if (!items.isEmpty() && !plan.own) {
        return invalid(
            {}, QStringLiteral("items are refunded with the order's own payment, not with payment %1").arg(plan.payNo));
    }
    if (!items.isEmpty() && !wantedFen) {
        return invalid(QStringLiteral("refund_amount_required"),
                       QStringLiteral("the order's items carry no prices: say the amount to give back for them"));
    }
    return {};
}

/// The processed payment (its channel and amount, locked when asked) and its payment record.
core::Result<void> readPayment(Session &session, const QString &orderNo, bool lock, RefundPlan &plan)
{
    auto payment = session.exec(QStringLiteral("SELECT channel, amount_fen FROM pay_callback_log "
                                               "WHERE pay_no = ? AND order_no = ? AND status = 'processed'")
                                    + (lock ? forUpdate(session.dialect()) : QString()),
                                {plan.payNo, orderNo}, QStringLiteral("payment to refund"));
    if (!payment)
        return payment.error();
    if (!payment.value().next())
        return invalid({}, QStringLiteral("no processed payment %1 for order %2").arg(plan.payNo, orderNo));
    plan.channelText = payment.value().value(0).toString();
    plan.paidFen = payment.value().value(1).toLongLong();
    const auto channel = core::channelFromName(plan.channelText);
    if (!channel)
        return Error::make(ErrorCode::Internal, QStringLiteral("payment %1 has an unknown channel").arg(plan.payNo));
    plan.channel = *channel;

    // Its out_trade_no: the order's payment record on that channel.
    auto record = session.exec(
        QStringLiteral("SELECT payment_no FROM payment_records WHERE order_no = ? AND channel = ?"),
        {orderNo, plan.channelText}, QStringLiteral("payment record to refund"));
    if (!record)
        return record.error();
    if (!record.value().next())
        return invalid({}, QStringLiteral("no %1 payment record for order %2").arg(plan.channelText, orderNo));
    plan.paymentNo = record.value().value(0).toString();

    return {};
}

/// The amount: what is left of the payment, counting the refunds still open; the last refund
/// of the order's own payment waits for them.
core::Result<void> planAmount(Session &session, std::optional<qint64> wantedFen, RefundPlan &plan)
{
    // Refunds in flight count: the platform may still pay them out.
    auto refunded = session.exec(
        QStringLiteral("SELECT COALESCE(SUM(amount_fen), 0), "
                       "COALESCE(SUM(CASE WHEN status IN ('requested', 'processing') THEN 1 ELSE 0 END), 0) "
                       "FROM refunds WHERE pay_no = ? AND status <> 'failed'"),
        {plan.payNo}, QStringLiteral("refunded so far"));
    if (!refunded)
        return refunded.error();
    const bool any = refunded.value().next();
    const qint64 already = any ? refunded.value().value(0).toLongLong() : 0;
    const qint64 open = any ? refunded.value().value(1).toLongLong() : 0;
    const qint64 left = plan.paidFen - already;
    plan.amountFen = wantedFen.value_or(left);
    const bool overAmount = plan.amountFen > left && !core::mutants::isOn(core::mutants::Mutant::RefundOverAmount);
    if (plan.amountFen <= 0 || overAmount) {
        return conflict(QStringLiteral("refund_exceeds_payment"),
                        QStringLiteral("refund of %1 fen exceeds what is left of payment %2 (%3 of %4 fen)")
                            .arg(plan.amountFen)
                            .arg(plan.payNo)
                            .arg(left)
                            .arg(plan.paidFen));
    }
    if (!plan.own)
        return {};
    plan.partial = plan.amountFen < left;
    if (!plan.partial && open > 0) {
        // The last refund's success must mean the whole payment went back: the open ones settle first.
        return conflict(QStringLiteral("refund_in_flight"),
                        QStringLiteral("%1 other refund(s) of payment %2 are still open: the refund of the rest waits "
                                       "for them to settle")
                            .arg(open)
                            .arg(plan.payNo));
    }
    return {};
}

/// Items given back: each bought by the order, no more than is left of it.
core::Result<void> checkItemsLeft(Session &session, const QString &orderNo, const core::RefundItems &items)
{
    auto itemsLeft = itemsLeftOf(session, orderNo);
    if (!itemsLeft)
        return itemsLeft.error();
    for (auto it = items.cbegin(); it != items.cend(); ++it) {
        if (!itemsLeft.value().contains(it.key())) {
            return invalid(QStringLiteral("refund_sku_not_in_order"),
                           QStringLiteral("order %1 did not buy SKU %2").arg(orderNo, it.key()));
        }
        const qint64 have = itemsLeft.value().value(it.key());
        if (it.value() > have) {
            return invalid(QStringLiteral("refund_items_exceed_order"),
                           QStringLiteral("%1 of SKU %2 asked back, %3 left of what order %4 bought")
                               .arg(it.value())
                               .arg(it.key())
                               .arg(have)
                               .arg(orderNo));
        }
    }
    return {};
}

} // namespace

core::Result<RefundPlan> planRefund(Session &session, const QString &orderNo, const QString &wantedPayNo,
                                    std::optional<qint64> wantedFen, const core::RefundItems &items, bool lock)
{
    if (auto checked = checkRefundRequest(wantedFen, items); !checked)
        return checked.error();
    RefundPlan plan;
    if (auto planned = planPayment(session, orderNo, wantedPayNo, wantedFen, items, plan); !planned)
        return planned.error();
    if (auto read = readPayment(session, orderNo, lock, plan); !read)
        return read.error();
    if (auto amount = planAmount(session, wantedFen, plan); !amount)
        return amount.error();
    if (!plan.own || items.isEmpty())
        return plan;
    if (auto left = checkItemsLeft(session, orderNo, items); !left)
        return left.error();
    return plan;
}

} // namespace

core::Result<void> checkRefund(Session &session, const core::CompensationProposal &p)
{
    auto plan = planRefund(session, p.orderNo, p.payNo, p.amountFen, p.refundItems, false);
    if (!plan)
        return plan.error();
    return {};
}

core::Result<RefundRecord> requestRefund(Session &session, const core::Compensation &c, qint64 nowMs)
{
    const QString refundNo = core::refundNoFor(c.id);
    auto existing = readRefund(session, refundNo);
    if (!existing)
        return existing.error();
    if (existing.value())
        return *existing.value();

    auto planned = planRefund(session, c.orderNo, c.payNo, c.amountFen, c.refundItems, true);
    if (!planned)
        return planned.error();
    const RefundPlan &plan = planned.value();
    if (plan.own) {
        // The CAS guard of either kind: the order must still be PAID. The last refund moves
        // it to REFUNDING; a partial one leaves it PAID and only bumps its version.
        auto moved = session.execAffected(
            plan.partial ? QStringLiteral("UPDATE orders SET version = version + 1, updated_at = ? "
                                          "WHERE order_no = ? AND status = 'PAID'")
                         : QStringLiteral("UPDATE orders SET status = 'REFUNDING', version = version + 1, "
                                          "updated_at = ? WHERE order_no = ? AND status = 'PAID'"),
            {nowMs, c.orderNo},
            plan.partial ? QStringLiteral("order stays PAID") : QStringLiteral("order PAID -> REFUNDING"));
        if (!moved)
            return moved.error();
        if (moved.value() != 1)
            return conflict(QStringLiteral("order_not_refundable"),
                            QStringLiteral("order %1 is not PAID").arg(c.orderNo));
    }
    RefundRecord r;
    r.refundNo = refundNo;
    r.compensationId = c.id;
    r.orderNo = c.orderNo;
    r.channel = plan.channel;
    r.payNo = plan.payNo;
    r.paymentNo = plan.paymentNo;
    r.amountFen = plan.amountFen;
    r.totalFen = plan.paidFen;
    r.ownPayment = plan.own;
    r.partial = plan.partial;
    r.items = c.refundItems;
    r.status = core::RefundStatus::Requested;
    r.updatedAtMs = nowMs;
    const QString itemsText = core::refundItemsText(r.items);
    auto inserted = session.exec(
        QStringLiteral(
            "INSERT INTO refunds (refund_no, compensation_id, order_no, channel, pay_no, payment_no, "
            "amount_fen, total_fen, own_payment, partial_refund, refund_items, status, attempts, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'requested', 0, ?, ?)"),
        {refundNo, c.id, c.orderNo, plan.channelText, plan.payNo, plan.paymentNo, plan.amountFen, plan.paidFen,
         plan.own ? 1 : 0, plan.partial ? 1 : 0,
         itemsText.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(itemsText), nowMs, nowMs},
        QStringLiteral("record refund"));
    if (!inserted)
        return inserted.error();
    return r;
}

core::Result<PartialRefundsOfOrder> partialRefundsOf(Session &session, const QString &orderNo)
{
    PartialRefundsOfOrder out;
    auto rows = session.exec(
        QStringLiteral("SELECT amount_fen, total_fen, refund_items FROM refunds WHERE order_no = ? "
                       "AND own_payment = 1 AND partial_refund = 1 AND status = 'succeeded'"),
        {orderNo}, QStringLiteral("partial refunds of the order"));
    if (!rows)
        return rows.error();
    while (rows.value().next()) {
        out.refundedFen += rows.value().value(0).toLongLong();
        out.paidFen = rows.value().value(1).toLongLong();
        const core::RefundItems items = core::refundItemsFromText(rows.value().value(2).toString());
        for (auto it = items.cbegin(); it != items.cend(); ++it)
            out.items[it.key()] += it.value();
    }
    return out;
}

} // namespace payonce::sql
