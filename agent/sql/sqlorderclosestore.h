#pragma once

#include "database.h"

#include "core/ports/orderclosestore.h"

namespace payonce::sql {

/// core::OrderCloseStore over orders, payment_records and pay_callback_log; the close's
/// audit row goes to audit_log inside the close transaction (SqlAuditWriter joins it).
/// Thread-safe.
class SqlOrderCloseStore final : public core::OrderCloseStore {
public:
    explicit SqlOrderCloseStore(Database &database) : m_database(database) {}

    core::Result<QList<core::ExpiredOrder>> expiredPending(qint64 updatedBeforeMs,
                                                           const core::ExpiredOrderCursor &after, int limit) override;
    core::Result<bool> closeExpired(const core::ExpiredOrder &order, const core::AuditEntry &audit,
                                    qint64 nowMs) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
