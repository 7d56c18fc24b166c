#pragma once

#include "session.h"

#include "core/ports/compensationstore.h"
#include "core/settlement/refund.h"

namespace payonce::sql {

/// The refunds table's statements that run inside a caller's transaction: the request
/// made by an approved refund compensation (CompensationTransaction::requestRefund), its
/// check at proposal (checkRefund: the same refusals, nothing written or locked) and the
/// row read by it and by SqlRefundStore.
core::Result<core::RefundRecord> requestRefund(Session &session, const core::Compensation &compensation, qint64 nowMs);
core::Result<void> checkRefund(Session &session, const core::CompensationProposal &proposal);

/// The partial refunds of an order's own payment that succeeded: what they gave back.
/// What the order is still owed (docs/design.md, "Partial refunds") is its items less
/// `items`, and core::pointsStillOwed(reward_points, refundedFen, paidFen).
struct PartialRefundsOfOrder {
    qint64 refundedFen = 0;
    qint64 paidFen = 0; ///< the payment's amount (0 when there are none)
    core::RefundItems items;
};
core::Result<PartialRefundsOfOrder> partialRefundsOf(Session &session, const QString &orderNo);
core::Result<std::optional<core::RefundRecord>> readRefund(Session &session, const QString &refundNo);
/// SELECT list and row decoding of refunds, for the store's listings.
QString refundColumns();
core::Result<core::RefundRecord> refundFromRow(const QSqlQuery &query);

} // namespace payonce::sql
