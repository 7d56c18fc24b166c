#pragma once

#include "session.h"

#include "core/ports/compensationstore.h"
#include "core/refund.h"

namespace payonce::sql {

/// The refunds table's statements that run inside a caller's transaction: the request
/// made by an approved refund compensation (CompensationTransaction::requestRefund) and
/// the row read by it and by SqlRefundStore.
core::Result<core::RefundRecord> requestRefund(Session &session, const core::Compensation &compensation, qint64 nowMs);
core::Result<std::optional<core::RefundRecord>> readRefund(Session &session, const QString &refundNo);
/// SELECT list and row decoding of refunds, for the store's listings.
QString refundColumns();
core::Result<core::RefundRecord> refundFromRow(const QSqlQuery &query);

} // namespace payonce::sql
