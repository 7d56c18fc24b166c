#pragma once

#include "database.h"
#include "sqlorders.h"

#include "core/ports/paymentstore.h"

namespace payonce::sql {

/// Orders and payment_records for the confirm and token paths.
///
/// inTransaction() is one Database::write(): contention re-runs the work, an error from
/// the work rolls back. The record insert is insert-if-absent on (order_no, channel)
/// (L4), every status change a single-statement CAS, the order CAS goes through
/// SqlOrders::transition (fenced: `… AND fence <= ?` in the same statement; without a
/// fence the status guard alone). Thread-safe.
class SqlPaymentStore final : public core::PaymentStore {
public:
    explicit SqlPaymentStore(Database &database) : m_database(database), m_orders(database) {}

    core::Result<std::optional<core::OrderSnapshot>> findOrder(const QString &orderNo) override;
    core::Result<void> inTransaction(
        const std::function<core::Result<void>(core::ConfirmTransaction &)> &work) override;

private:
    Database &m_database;
    SqlOrders m_orders;
};

} // namespace payonce::sql
