#include "sqlrefunds.h"

#include "dialectsql.h"

#include "core/mutants.h"

namespace payonce::sql {

using core::Error;
using core::ErrorCode;
using core::RefundRecord;

QString refundColumns()
{
    return QStringLiteral("refund_no, compensation_id, order_no, channel, pay_no, payment_no, amount_fen, total_fen, "
                          "own_payment, status, platform_refund_id, attempts, last_error, updated_at");
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
        return Error::make(ErrorCode::Internal, QStringLiteral("refund %1 has an unknown channel or status").arg(r.refundNo));
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

core::Result<RefundRecord> requestRefund(Session &session, const core::Compensation &c, qint64 nowMs)
{
    const QString refundNo = core::refundNoFor(c.id);
    auto existing = readRefund(session, refundNo);
    if (!existing)
        return existing.error();
    if (existing.value())
        return *existing.value();

    auto order = session.exec(QStringLiteral("SELECT status, pay_no FROM orders WHERE order_no = ?"), {c.orderNo},
                              QStringLiteral("order to refund"));
    if (!order)
        return order.error();
    if (!order.value().next())
        return Error::make(ErrorCode::NotFound, QStringLiteral("no order %1").arg(c.orderNo));
    const QString orderStatus = order.value().value(0).toString();
    const QString orderPayNo = order.value().value(1).toString();
    const QString payNo = c.payNo.isEmpty() ? orderPayNo : c.payNo;
    auto invalid = [](const QString &why) { return Error::make(ErrorCode::InvalidInput, why, why); };
    if (payNo.isEmpty())
        return invalid(QStringLiteral("order %1 has no payment to refund").arg(c.orderNo));

    // The payment as it was processed: its channel and amount.
    auto payment = session.exec(QStringLiteral("SELECT channel, amount_fen FROM pay_callback_log "
                                               "WHERE pay_no = ? AND order_no = ? AND status = 'processed'"),
                                {payNo, c.orderNo}, QStringLiteral("payment to refund"));
    if (!payment)
        return payment.error();
    if (!payment.value().next())
        return invalid(QStringLiteral("no processed payment %1 for order %2").arg(payNo, c.orderNo));
    const QString channelText = payment.value().value(0).toString();
    const qint64 paidFen = payment.value().value(1).toLongLong();
    const auto channel = core::channelFromName(channelText);
    if (!channel)
        return Error::make(ErrorCode::Internal, QStringLiteral("payment %1 has an unknown channel").arg(payNo));

    // Its out_trade_no: the order's payment record on that channel.
    auto record = session.exec(QStringLiteral("SELECT payment_no FROM payment_records WHERE order_no = ? AND channel = ?"),
                               {c.orderNo, channelText}, QStringLiteral("payment record to refund"));
    if (!record)
        return record.error();
    if (!record.value().next())
        return invalid(QStringLiteral("no %1 payment record for order %2").arg(channelText, c.orderNo));
    const QString paymentNo = record.value().value(0).toString();

    auto refunded = session.exec(QStringLiteral("SELECT COALESCE(SUM(amount_fen), 0) FROM refunds "
                                                "WHERE pay_no = ? AND status <> 'failed'"),
                                 {payNo}, QStringLiteral("refunded so far"));
    if (!refunded)
        return refunded.error();
    const qint64 already = refunded.value().next() ? refunded.value().value(0).toLongLong() : 0;
    const qint64 amount = c.amountFen.value_or(paidFen - already);
    const bool overAmount = amount > paidFen - already && !core::mutants::isOn(core::mutants::Mutant::RefundOverAmount);
    if (amount <= 0 || overAmount) {
        return invalid(QStringLiteral("refund of %1 fen exceeds what is left of payment %2 (%3 of %4 fen)")
                           .arg(amount)
                           .arg(payNo)
                           .arg(paidFen - already)
                           .arg(paidFen));
    }
    const bool own = payNo == orderPayNo;
    if (own) {
        if (amount != paidFen)
            return invalid(QStringLiteral("the order's own payment is refunded whole (%1 fen)").arg(paidFen));
        auto moved = session.execAffected(QStringLiteral("UPDATE orders SET status = 'REFUNDING', version = version + 1, "
                                                         "updated_at = ? WHERE order_no = ? AND status = 'PAID'"),
                                          {nowMs, c.orderNo}, QStringLiteral("order PAID -> REFUNDING"));
        if (!moved)
            return moved.error();
        if (moved.value() != 1) {
            return Error::make(ErrorCode::Conflict,
                               QStringLiteral("order %1 is %2, not PAID").arg(c.orderNo, orderStatus),
                               QStringLiteral("the order is not PAID"));
        }
    }
    RefundRecord r;
    r.refundNo = refundNo;
    r.compensationId = c.id;
    r.orderNo = c.orderNo;
    r.channel = *channel;
    r.payNo = payNo;
    r.paymentNo = paymentNo;
    r.amountFen = amount;
    r.totalFen = paidFen;
    r.ownPayment = own;
    r.status = core::RefundStatus::Requested;
    r.updatedAtMs = nowMs;
    auto inserted = session.exec(
        QStringLiteral("INSERT INTO refunds (refund_no, compensation_id, order_no, channel, pay_no, payment_no, "
                       "amount_fen, total_fen, own_payment, status, attempts, created_at, updated_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'requested', 0, ?, ?)"),
        {refundNo, c.id, c.orderNo, channelText, payNo, paymentNo, amount, paidFen, own ? 1 : 0, nowMs, nowMs},
        QStringLiteral("record refund"));
    if (!inserted)
        return inserted.error();
    return r;
}

} // namespace payonce::sql
