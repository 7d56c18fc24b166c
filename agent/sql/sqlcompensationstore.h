#pragma once

#include "database.h"

#include "core/ports/compensationstore.h"

namespace payonce::sql {

/// core::CompensationStore over compensations, and the effect tables a compensation
/// repairs (user_coupon frozen, point_log and stock_log negative entries, skus given
/// back). Nothing here deletes. A proposal without a dedup_key gets a unique one
/// ("operator:<uuid>"). Thread-safe.
class SqlCompensationStore final : public core::CompensationStore {
public:
    explicit SqlCompensationStore(Database &database) : m_database(database) {}

    core::Result<QList<core::Compensation>> list(const QString &status, int limit) override;
    core::Result<void> inTransaction(
        const std::function<core::Result<void>(core::CompensationTransaction &)> &work) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
