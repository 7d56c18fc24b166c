#include "sqlorderrepository.h"

#include "sqlorders.h"

namespace payonce::sql {

using core::Error;
using core::ErrorCode;

namespace {

QString upsertSkuSql(Dialect dialect)
{
    if (dialect == Dialect::MariaDb) {
        return QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, ?, ?) "
                              "ON DUPLICATE KEY UPDATE stock = VALUES(stock), updated_at = VALUES(updated_at)");
    }
    return QStringLiteral(
        "INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (sku_id) DO UPDATE SET stock = excluded.stock, updated_at = excluded.updated_at");
}

core::Result<void> readOrderRow(Session &session, const QString &orderNo, std::optional<core::OrderDetail> &out)
{
    auto query = session.exec(
        QStringLiteral("SELECT order_no, user_id, amount_fen, status, version, pay_no, reward_coupon_template, "
                       "reward_points FROM orders WHERE order_no = ?"),
        {orderNo}, QStringLiteral("read order"));
    if (!query)
        return query.error();
    QSqlQuery &q = query.value();
    if (!q.next())
        return {};
    const auto status = core::orderStatusFromName(q.value(3).toString());
    if (!status) {
        return Error::make(ErrorCode::Internal,
                           QStringLiteral("order %1 has an unknown status %2").arg(orderNo, q.value(3).toString()),
                           QStringLiteral("the order cannot be read"));
    }
    core::OrderDetail detail;
    detail.orderNo = q.value(0).toString();
    detail.userId = q.value(1).toLongLong();
    detail.amountFen = q.value(2).toLongLong();
    detail.status = *status;
    detail.version = q.value(4).toLongLong();
    if (!q.value(5).isNull())
        detail.payNo = q.value(5).toString();
    if (!q.value(6).isNull())
        detail.rewardCouponTemplate = q.value(6).toString();
    detail.rewardPoints = q.value(7).toLongLong();
    out = std::move(detail);
    return {};
}

core::Result<void> readLines(Session &session, core::OrderDetail &detail)
{
    const QVariantList key{detail.orderNo};

    auto items = session.exec(QStringLiteral("SELECT sku_id, qty FROM order_items WHERE order_no = ? ORDER BY sku_id"),
                              key, QStringLiteral("read order items"));
    if (!items)
        return items.error();
    while (items.value().next())
        detail.items.append(core::OrderItem{items.value().value(0).toString(), items.value().value(1).toLongLong()});

    auto payments = session.exec(
        QStringLiteral("SELECT payment_no, channel, status, attempt, amount_fen, code_url, last_error "
                       "FROM payment_records WHERE order_no = ? ORDER BY id"),
        key, QStringLiteral("read payment records"));
    if (!payments)
        return payments.error();
    QSqlQuery &p = payments.value();
    while (p.next()) {
        const auto channel = core::channelFromName(p.value(1).toString());
        const auto status = core::paymentRecordStatusFromName(p.value(2).toString());
        if (!channel || !status) {
            return Error::make(ErrorCode::Internal,
                               QStringLiteral("payment record %1 has channel %2, status %3")
                                   .arg(p.value(0).toString(), p.value(1).toString(), p.value(2).toString()),
                               QStringLiteral("the order's payments cannot be read"));
        }
        detail.payments.append(core::PaymentRecord{p.value(0).toString(), detail.orderNo, *channel, *status,
                                                   p.value(3).toInt(), p.value(4).toLongLong(), p.value(5).toString(),
                                                   p.value(6).toString()});
    }

    // What the order holds: its ledger's entries net per SKU (given back in full: none).
    auto stock = session.exec(
        QStringLiteral("SELECT sku_id, SUM(qty) FROM stock_log WHERE order_no = ? GROUP BY sku_id "
                       "HAVING SUM(qty) <> 0 ORDER BY sku_id"),
        key, QStringLiteral("read stock_log"));
    if (!stock)
        return stock.error();
    while (stock.value().next())
        detail.stock.append(core::StockEffect{stock.value().value(0).toString(), stock.value().value(1).toLongLong()});

    auto coupons = session.exec(
        QStringLiteral("SELECT template_id, status FROM user_coupon WHERE order_no = ? ORDER BY template_id"), key,
        QStringLiteral("read user_coupon"));
    if (!coupons)
        return coupons.error();
    while (coupons.value().next())
        detail.coupons.append(
            core::CouponEffect{coupons.value().value(0).toString(), coupons.value().value(1).toString()});

    auto points = session.exec(QStringLiteral("SELECT point_type, delta FROM point_log WHERE order_no = ? ORDER BY id"),
                               key, QStringLiteral("read point_log"));
    if (!points)
        return points.error();
    while (points.value().next())
        detail.points.append(
            core::PointEffect{points.value().value(0).toString(), points.value().value(1).toLongLong()});

    auto findings = session.exec(
        QStringLiteral("SELECT id, kind, status, pay_no, evidence, seen_count, first_seen_at, last_seen_at "
                       "FROM findings WHERE order_no = ? ORDER BY id"),
        key, QStringLiteral("read findings"));
    if (!findings)
        return findings.error();
    QSqlQuery &f = findings.value();
    while (f.next()) {
        detail.findings.append(core::OrderFinding{f.value(0).toLongLong(), f.value(1).toString(), f.value(2).toString(),
                                                  f.value(3).toString(), f.value(4).toString(), f.value(5).toLongLong(),
                                                  f.value(6).toLongLong(), f.value(7).toLongLong()});
    }
    return {};
}

} // namespace

core::Result<void> SqlOrderRepository::createOrder(const core::OrderDraft &order)
{
    NewOrder row;
    row.orderNo = order.orderNo;
    row.userId = order.userId;
    row.amountFen = order.amountFen;
    row.rewardCouponTemplate = order.rewardCouponTemplate.value_or(QString());
    row.rewardPoints = order.rewardPoints;
    for (const core::OrderItem &item : order.items)
        row.items.append(NewOrder::Item{item.skuId, item.qty});
    return SqlOrders(m_database).create(row);
}

core::Result<core::SkuStock> SqlOrderRepository::setSkuStock(const QString &skuId, qint64 stock)
{
    auto written = m_database.write([&](Session &session) -> core::Result<void> {
        auto upserted = session.exec(upsertSkuSql(session.dialect()), {skuId, stock, session.nowMs()},
                                     QStringLiteral("upsert sku"));
        if (!upserted)
            return upserted.error();
        return {};
    });
    if (!written)
        return written.error();
    return core::SkuStock{skuId, stock};
}

core::Result<std::optional<core::SkuStock>> SqlOrderRepository::skuStock(const QString &skuId)
{
    std::optional<core::SkuStock> out;
    auto read = m_database.read([&](Session &session) -> core::Result<void> {
        out.reset();
        auto query = session.exec(QStringLiteral("SELECT sku_id, stock FROM skus WHERE sku_id = ?"), {skuId},
                                  QStringLiteral("read sku"));
        if (!query)
            return query.error();
        if (query.value().next())
            out = core::SkuStock{query.value().value(0).toString(), query.value().value(1).toLongLong()};
        return {};
    });
    if (!read)
        return read.error();
    return out;
}

core::Result<std::optional<core::OrderDetail>> SqlOrderRepository::orderDetail(const QString &orderNo)
{
    std::optional<core::OrderDetail> out;
    auto read = m_database.read([&](Session &session) -> core::Result<void> {
        out.reset();
        auto row = readOrderRow(session, orderNo, out);
        if (!row)
            return row;
        if (!out)
            return {};
        return readLines(session, *out);
    });
    if (!read)
        return read.error();
    return out;
}

} // namespace payonce::sql
