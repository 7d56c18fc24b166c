#pragma once

#include "database.h"

#include "core/ports/patrolstore.h"

namespace payonce::sql {

/// core::PatrolStore over orders, order_items, user_coupon, point_log, stock_log, outbox,
/// payment_records and pay_callback_log (read; orders and payment_records written only by
/// revertPaying) and findings (the shared upsert of sqlfindings.h). Thread-safe.
class SqlPatrolStore final : public core::PatrolStore {
public:
    explicit SqlPatrolStore(Database &database) : m_database(database) {}

    core::Result<QList<core::PaidOrderEffects>> paidOrders(const QString &afterOrderNo, int limit) override;
    core::Result<core::StoredFinding> raiseFinding(const core::Finding &finding, qint64 nowMs) override;
    core::Result<QList<core::StuckPayingOrder>> stuckPaying(qint64 updatedBeforeMs, int limit) override;
    core::Result<bool> revertPaying(const QString &orderNo, const QList<QPair<QString, QString>> &renumbered,
                                    const QString &lastError, qint64 nowMs,
                                    const core::InTransaction &audit = {}) override;
    core::Result<QList<core::PaymentAnomaly>> paymentAnomalies(qint64 afterLogId, int limit,
                                                               qint64 *lastLogId) override;
    core::Result<QList<core::StuckAcceptedRow>> stuckAccepted(qint64 createdBeforeMs, int limit) override;
    core::Result<int> resolveNotSeenSince(const QStringList &kinds, qint64 seenSinceMs, qint64 nowMs) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
