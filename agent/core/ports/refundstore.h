#pragma once

#include "core/common/result.h"
#include "core/settlement/refund.h"

#include <QList>
#include <QString>

#include <optional>

namespace payonce::core {

/// How a settlement went: this call settled the refund, it was settled before (nothing
/// written), there is no refund of that number, or the platform reported it ABNORMAL
/// (WeChat: waiting for manual handling, the money may still go back) and it stays open
/// with a refund_abnormal finding.
enum class RefundSettlement {
    Settled,
    AlreadySettled,
    Unknown,
    Abnormal
};

/// Where refunds live (the rows are made by CompensationTransaction::requestRefund, in
/// the approval's transaction). Each method is its own transaction; the settlements
/// decide by a status CAS on the refund row, so concurrent notifications, follow-ups and
/// agents settle a refund once. Thread-safe; work runs on the calling thread.
class RefundStore {
public:
    virtual ~RefundStore() = default;
    virtual Result<std::optional<RefundRecord>> find(const QString &refundNo) = 0;
    /// The right to send a `requested` refund to the platform now: true for one caller
    /// until leaseMs pass or its recordAttempt(); false while another one holds it (two
    /// approvals at once, the follow-up) or the refund is no longer `requested`.
    virtual Result<bool> claimSubmission(const QString &refundNo, qint64 nowMs, qint64 leaseMs) = 0;
    /// One more submission to the platform, on a refund not settled yet (the claim ends): attempts + 1;
    /// accepted: → processing with the platform's refund id; otherwise (outcome unknown, or
    /// the platform no longer knows it) → requested with the error, to be sent again.
    virtual Result<void> recordAttempt(const QString &refundNo, bool accepted, const QString &platformRefundId,
                                       const QString &error, qint64 nowMs) = 0;
    /// requested|processing → succeeded. For the order's own payment's last refund:
    /// REFUNDING → REFUNDED, its active coupons frozen, its net points reversed by one entry
    /// keyed "refund:<refund_no>", the stock it still holds given back by entries of its own
    /// stock ledger keyed "refund:<refund_no>", an "order.refunded" outbox event. For a
    /// partial refund (the order stays PAID, its coupon active): the points taken back in
    /// proportion (core/partialrefund.h) and the refund's items given back, under the same
    /// keys. An audit row.
    virtual Result<RefundSettlement> settleSucceeded(const QString &refundNo, const QString &platformRefundId,
                                                     const QString &actor, const QString &reason, qint64 nowMs) = 0;
    /// requested|processing → failed with why (CLOSED, a refusal: nothing was refunded). For the order's own payment's
    /// last refund: REFUNDING → PAID (a partial refund left it PAID). A `refund_failed` finding (subject "refund:<refund_no>"), the compensation
    /// marked failed, an audit row.
    virtual Result<RefundSettlement> settleFailed(const QString &refundNo, const QString &why, const QString &actor,
                                                  qint64 nowMs) = 0;
    /// The platform says ABNORMAL (WeChat REFUND.ABNORMAL, or its refund or query answer):
    /// not a failure — the refund waits for manual handling at the platform and a later
    /// SUCCESS or CLOSED settles it. A requested or processing refund becomes (stays)
    /// processing; a `refund_abnormal` finding (subject "refund:<refund_no>") is raised or
    /// seen again, with an audit row when it is new. Abnormal; AlreadySettled for a refund
    /// that is succeeded or failed (nothing written); Unknown for no such refund. Both
    /// settlements resolve the refund's open refund_abnormal finding.
    virtual Result<RefundSettlement> noteAbnormal(const QString &refundNo, const QString &why, const QString &actor,
                                                  qint64 nowMs) = 0;
    /// requested|processing refunds last changed before updatedBeforeMs, oldest first.
    virtual Result<QList<RefundRecord>> unfinished(qint64 updatedBeforeMs, int limit) = 0;
    /// Refunds of an order, newest first (the operator's view).
    virtual Result<QList<RefundRecord>> ofOrder(const QString &orderNo) = 0;
};

} // namespace payonce::core
