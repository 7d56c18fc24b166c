#include "benchsqlorders.h"

#include "sql/database.h"
#include "sql/sqlorderrepository.h"
#include "sql/sqlpaymentstore.h"

namespace payonce::bench {

QString benchSkuId(const QString &prefix, qint64 index, int skus)
{
    return prefix + QStringLiteral("-SKU") + QString::number(index % std::max(skus, 1));
}

core::Result<std::vector<BenchSqlOrder>> prepareBenchSqlOrders(sql::Database &database, const QString &prefix,
                                                               qint64 count, int skus, int threads)
{
    for (int k = 0; k < std::max(skus, 1); ++k) {
        auto made = database.write([&](sql::Session &session) -> core::Result<void> {
            auto done = session.exec(
                QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, 1000000000, 1)"),
                {benchSkuId(prefix, k, skus)}, QStringLiteral("bench sku"));
            if (!done)
                return done.error();
            return {};
        });
        if (!made.ok())
            return made.error();
    }
    std::vector<BenchSqlOrder> orders(std::size_t(std::max<qint64>(count, 0)));
    for (qint64 i = 0; i < count; ++i) {
        BenchSqlOrder &order = orders[std::size_t(i)];
        order.orderNo = prefix + QStringLiteral("-O") + QString::number(i);
        order.paymentNo = prefix + QStringLiteral("-P") + QString::number(i);
        order.userId = 500000 + i;
        order.skuId = benchSkuId(prefix, i, skus);
    }
    sql::SqlOrderRepository repository(database);
    sql::SqlPaymentStore payments(database);
    const LoadResult prepared = onThreads(threads, count, [&](qint64 i) -> core::Result<void> {
        const BenchSqlOrder &order = orders[std::size_t(i)];
        core::OrderDraft draft;
        draft.orderNo = order.orderNo;
        draft.userId = order.userId;
        draft.amountFen = order.amountFen;
        draft.items = {core::OrderItem{order.skuId, 1}};
        draft.rewardCouponTemplate = QStringLiteral("WELCOME10");
        draft.rewardPoints = 100;
        if (auto created = repository.createOrder(draft); !created.ok())
            return created.error();
        // What a confirm leaves behind: the order PAYING, its payment record pending.
        return payments.inTransaction([&](core::ConfirmTransaction &tx) -> core::Result<void> {
            const core::PaymentRecord record{order.paymentNo,
                                             order.orderNo,
                                             core::Channel::WeChat,
                                             core::PaymentRecordStatus::Creating,
                                             1,
                                             order.amountFen,
                                             {},
                                             {}};
            if (auto inserted = tx.insertRecordIfAbsent(record); !inserted.ok())
                return inserted.error();
            if (auto moved = tx.transition(order.orderNo, core::OrderStatus::Pending, core::OrderStatus::Paying, 1);
                !moved.ok())
                return moved.error();
            if (auto pending = tx.markRecordPending(record.paymentNo, QStringLiteral("weixin://bench")); !pending.ok())
                return pending.error();
            return {};
        });
    });
    if (prepared.failed > 0)
        return core::Error::make(core::ErrorCode::Internal, prepared.failureSamples.join(QStringLiteral("; ")));
    return orders;
}

} // namespace payonce::bench
