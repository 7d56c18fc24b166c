#pragma once

#include "database.h"

#include "core/ports/refundstore.h"

namespace payonce::sql {

/// core::RefundStore over refunds, with the effects of a settlement on orders, user_coupon,
/// point_log, stock_log, skus, outbox, compensations, findings and audit_log — all in the
/// settlement's one transaction. Thread-safe.
class SqlRefundStore final : public core::RefundStore {
public:
    explicit SqlRefundStore(Database &database) : m_database(database) {}

    core::Result<std::optional<core::RefundRecord>> find(const QString &refundNo) override;
    core::Result<bool> claimSubmission(const QString &refundNo, qint64 nowMs, qint64 leaseMs) override;
    core::Result<void> recordAttempt(const QString &refundNo, bool accepted, const QString &platformRefundId,
                                     const QString &error, qint64 nowMs) override;
    core::Result<core::RefundSettlement> settleSucceeded(const QString &refundNo, const QString &platformRefundId,
                                                         const QString &actor, const QString &reason,
                                                         qint64 nowMs) override;
    core::Result<core::RefundSettlement> settleFailed(const QString &refundNo, const QString &why, const QString &actor,
                                                      qint64 nowMs) override;
    core::Result<core::RefundSettlement> noteAbnormal(const QString &refundNo, const QString &why, const QString &actor,
                                                      qint64 nowMs) override;
    core::Result<QList<core::RefundRecord>> unfinished(qint64 updatedBeforeMs, int limit) override;
    core::Result<QList<core::RefundRecord>> ofOrder(const QString &orderNo) override;

private:
    core::Result<QList<core::RefundRecord>> select(const QString &where, const QVariantList &binds, int limit);

    Database &m_database;
};

} // namespace payonce::sql
