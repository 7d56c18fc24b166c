#pragma once

#include "database.h"

#include "core/ports/orderrepository.h"

namespace payonce::sql {

/// core::OrderRepository on Qt Sql, for all three dialects.
///
/// createOrder() is SqlOrders::create(): one write() unit inserting the order and its
/// items; the primary key of orders decides a duplicate order_no (Duplicate from the
/// driver's native code), and the transaction rolls back so nothing else is written.
/// setSkuStock() is a single upsert statement (SQLite/PostgreSQL ON CONFLICT DO UPDATE,
/// MariaDB ON DUPLICATE KEY UPDATE) — no read first. Reads run in autocommit.
/// Thread-safe (Database gives each thread its own connection).
class SqlOrderRepository final : public core::OrderRepository {
public:
    explicit SqlOrderRepository(Database &database) : m_database(database) {}

    core::Result<void> createOrder(const core::OrderDraft &order) override;
    core::Result<core::SkuStock> setSkuStock(const QString &skuId, qint64 stock) override;
    core::Result<std::optional<core::SkuStock>> skuStock(const QString &skuId) override;
    core::Result<std::optional<core::OrderDetail>> orderDetail(const QString &orderNo) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
