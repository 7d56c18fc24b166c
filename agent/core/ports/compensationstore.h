#pragma once

#include "core/common/result.h"
#include "core/settlement/refund.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>
#include <optional>

namespace payonce::core {

enum class CompensationKind {
    FreezeCoupon,
    ReversePoints,
    RestoreStock,
    Refund
};
QString compensationKindName(CompensationKind kind);
std::optional<CompensationKind> compensationKindFromName(QStringView name);

/// A compensation row (docs/openapi.yaml, compensations).
struct Compensation {
    qint64 id = 0;
    CompensationKind kind = CompensationKind::FreezeCoupon;
    QString orderNo;
    std::optional<qint64> findingId;
    QString dedupKey;
    QString status; ///< proposed | approved | rejected | executed | failed
    QString proposedBy;
    QString proposalReason;
    QString decidedBy;
    QString decisionReason;
    QJsonObject result; ///< what execution did
    qint64 createdAtMs = 0;
    QString payNo;                   ///< refund: the payment to give back (empty: the order's own)
    std::optional<qint64> amountFen; ///< refund: how much (none: what is left of that payment)
    RefundItems refundItems;         ///< refund: the items returned with it (empty: none)
};

/// A proposal before it is stored. An empty dedupKey never dedups.
struct CompensationProposal {
    CompensationKind kind = CompensationKind::FreezeCoupon;
    QString orderNo;
    std::optional<qint64> findingId;
    QString dedupKey;
    QString proposedBy;
    QString reason;
    QString payNo;                   ///< refund only: the payment to give back (empty: the order's own)
    std::optional<qint64> amountFen; ///< refund only: how much (none: what is left of that payment)
    RefundItems refundItems;         ///< refund only: the items returned with it (an amount is then required)
};

/// The statements of one compensation transaction; valid only inside
/// CompensationStore::inTransaction(), all commit or roll back together.
class CompensationTransaction {
public:
    virtual ~CompensationTransaction() = default;
    /// Insert-if-absent on dedup_key, status proposed. nullopt: a proposal with this key
    /// exists (nothing written).
    virtual Result<std::optional<qint64>> insertProposal(const CompensationProposal &proposal, qint64 nowMs) = 0;
    virtual Result<std::optional<Compensation>> find(qint64 id) = 0;
    virtual Result<std::optional<Compensation>> findByDedupKey(const QString &dedupKey) = 0;
    /// CAS status proposed → `to` (approved | rejected) with decided_by/reason/at. true: this
    /// call decided it.
    virtual Result<bool> decide(qint64 id, const QString &to, const QString &actor, const QString &reason,
                                qint64 nowMs) = 0;
    /// CAS approved → executed with result and executed_at. true: this call did it.
    virtual Result<bool> markExecuted(qint64 id, const QJsonObject &result, qint64 nowMs) = 0;

    /// The order's active coupons beyond the one it is owed (the oldest active one of its
    /// reward template is kept; a PAID or REFUNDING order is owed it) become frozen.
    /// Answers the ids frozen. The order's row is locked for the rest of the transaction.
    virtual Result<QList<qint64>> freezeExtraCoupons(const QString &orderNo, qint64 nowMs) = 0;
    /// Points beyond reward_points (owed to a PAID or REFUNDING order; net over the order's point_log) are reversed by one
    /// negative entry keyed (order_no, pointType). Answers the delta written (0: none).
    virtual Result<qint64> reverseExtraPoints(const QString &orderNo, const QString &pointType, qint64 nowMs) = 0;
    /// Stock the order holds beyond what its items owe (all of it when the order is neither
    /// PAID nor REFUNDING) goes back to skus, recorded as a negative entry of the order's own
    /// stock ledger under entry_key = reversalKey; never more than the order's net holding,
    /// so nothing is given back twice. Answers {"stock_restored": {sku_id: qty}} and, for
    /// the SKUs nothing went back of, "stock_refused": {sku_id: "nothing_taken" | "owed"}.
    virtual Result<QJsonObject> restoreExtraStock(const QString &orderNo, const QString &reversalKey, qint64 nowMs) = 0;
    /// The refund an approved refund compensation asks for, recorded as `requested` under
    /// refundNoFor(id): the payment is c.payNo (default: the one the order is PAID by), the
    /// amount c.amountFen (default: what is left of that payment after its other refunds
    /// that have not failed). The payment's callback-log row is locked before anything is
    /// summed, so concurrent approvals of one payment never give back more than it paid.
    /// Of the order's own payment (the order must be PAID: Conflict order_not_refundable
    /// otherwise):
    /// - less than what is left is a partial refund: the order stays PAID, guarded by a
    ///   CAS on its status (version + 1); c.refundItems are checked against the items the
    ///   order bought less those of its other refunds that have not failed;
    /// - what is left is the last refund: PAID → REFUNDING by CAS, refused (Conflict
    ///   refund_in_flight) while another refund of the payment is open, so that its success
    ///   really means the whole payment went back.
    /// Refusals, nothing written: no processed payment of that pay_no for the order
    /// (InvalidInput), an amount above what is left (Conflict refund_exceeds_payment),
    /// items of an extra payment or items without an amount (InvalidInput
    /// refund_amount_required), a SKU the order did not buy (InvalidInput
    /// refund_sku_not_in_order), more of a SKU than is left of it (InvalidInput
    /// refund_items_exceed_order). A second call for the same compensation answers the row
    /// as it is.
    virtual Result<RefundRecord> requestRefund(const Compensation &c, qint64 nowMs) = 0;
    /// What requestRefund would refuse of this proposal now, refused (the same errors);
    /// nothing is written or locked. The proposal of a refund is checked so, and its
    /// approval again (the order may have changed in between).
    virtual Result<void> checkRefund(const CompensationProposal &proposal) = 0;
};

/// Where compensations live. Thread-safe; work runs on the calling thread.
class CompensationStore {
public:
    virtual ~CompensationStore() = default;
    virtual Result<QList<Compensation>> list(const QString &status, int limit) = 0;
    /// One transaction (joining the caller's on this thread, if any).
    virtual Result<void> inTransaction(const std::function<Result<void>(CompensationTransaction &)> &work) = 0;
};

} // namespace payonce::core
