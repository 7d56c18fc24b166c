#pragma once

#include "core/common/channel.h"
#include "core/settlement/partialrefund.h"

#include <QString>

#include <optional>

namespace payonce::core {

/// A refund's life: requested (recorded with the approval, not yet acknowledged by the
/// platform) → processing (the platform accepted it) → succeeded | failed. requested and
/// processing may also end directly; succeeded and failed are final.
enum class RefundStatus {
    Requested,
    Processing,
    Succeeded,
    Failed
};

/// "requested", "processing", "succeeded", "failed".
QString refundStatusName(RefundStatus status);
std::optional<RefundStatus> refundStatusFromName(QStringView name);

/// Our out_refund_no for the refund of a compensation: "RF" and the id, 18 digits. One
/// compensation, one refund number, so no retry or second approval can refund twice.
QString refundNoFor(qint64 compensationId);

/// One row of refunds.
struct RefundRecord {
    QString refundNo;
    qint64 compensationId = 0;
    QString orderNo;
    Channel channel = Channel::WeChat;
    QString payNo;           ///< the payment given back
    QString paymentNo;       ///< its out_trade_no
    qint64 amountFen = 0;    ///< this refund
    qint64 totalFen = 0;     ///< the payment's amount
    bool ownPayment = false; ///< the payment the order is PAID by
    /// Part of the order's own payment, not the rest of it: the order stays PAID, and its
    /// success gives back `items` and points in proportion (core/partialrefund.h). false
    /// for the own payment's last refund (the order goes REFUNDING → REFUNDED | PAID) and
    /// for an extra payment's refunds (the order is left as it is).
    bool partial = false;
    RefundItems items; ///< what a partial refund gives back to the shelf (empty: nothing)
    RefundStatus status = RefundStatus::Requested;
    QString platformRefundId;
    qint64 attempts = 0;
    QString lastError;
    qint64 updatedAtMs = 0;
};

} // namespace payonce::core
