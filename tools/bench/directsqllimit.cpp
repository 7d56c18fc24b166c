#include "directsqllimit.h"

#include "benchsqlorders.h"

#include "shared/tracecontext.h"
#include "sql/database.h"
#include "sql/sqlcallbackstore.h"

#include <QDateTime>
#include <QMutex>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace payonce::bench {

namespace {

using Clock = std::chrono::steady_clock;
using core::Result;

/// One first-time notification's statements, in the order the callback pipeline issues them.
Result<void> payOnce(core::CallbackStore &store, const DirectSqlOptions &options, const BenchSqlOrder &benchOrder,
                     const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &body, qint64 i)
{
    const QString &paymentNo = benchOrder.paymentNo;
    const QString payNo = options.prefix + QStringLiteral("-T") + QString::number(i);
    auto found = store.findOrderForPayment(paymentNo);
    if (!found.ok())
        return found.error();
    if (!*found)
        return core::Error::make(core::ErrorCode::NotFound, QStringLiteral("no order for ") + paymentNo);
    const core::CallbackOrder order = **found;
    core::DeliveryRecord delivery;
    delivery.channel = core::Channel::WeChat;
    delivery.payNo = payNo;
    delivery.orderNo = order.orderNo;
    delivery.receivedAtMs = QDateTime::currentMSecsSinceEpoch();
    delivery.verified = true;
    delivery.headers = headers;
    delivery.rawBody = body;
    delivery.agentId = QStringLiteral("bench");
    // The agent stores the receiving request's trace id with the delivery and its order.paid
    // event; the same column values here keep the statements the same.
    delivery.traceId = randomTraceHex(16);
    auto appended = store.appendDelivery(delivery);
    if (!appended.ok())
        return appended.error();
    auto accepted = store.insertAccepted(core::AcceptedCallback{core::Channel::WeChat, payNo, order.orderNo,
                                                                order.amountFen, *appended,
                                                                QDateTime::currentMSecsSinceEpoch(), paymentNo});
    if (!accepted.ok())
        return accepted.error();
    const qint64 fence = 2; // above the confirm's 1, as a later lock holder's token would be
    auto committed = store.inTransaction([&](core::CallbackTransaction &tx) -> Result<void> {
        auto moved = tx.markPaid(order.orderNo, payNo, core::Channel::WeChat, fence);
        if (!moved.ok())
            return moved.error();
        if (moved.value() != core::TransitionOutcome::Transitioned)
            return core::Error::make(core::ErrorCode::Conflict, QStringLiteral("CAS lost for ") + order.orderNo);
        for (const core::CallbackOrder::Item &item : order.items) {
            if (auto taken = tx.takeStock(item.skuId, item.qty); !taken.ok())
                return taken.error();
            if (auto logged = tx.insertStockLog(order.orderNo, item.skuId, QStringLiteral("take"), item.qty, fence);
                !logged.ok())
                return logged.error();
        }
        if (auto coupon = tx.insertCoupon(order.orderNo, order.userId, order.rewardCouponTemplate, fence); !coupon.ok())
            return coupon.error();
        if (auto points = tx.insertPoints(order.orderNo, order.userId, QStringLiteral("reward"), order.rewardPoints,
                                          fence);
            !points.ok())
            return points.error();
        auto outboxed = tx.insertOutbox(QStringLiteral("order.paid:") + order.orderNo, QStringLiteral("order.paid"),
                                        order.orderNo,
                                        QJsonObject{{QStringLiteral("order_no"), order.orderNo},
                                                    {QStringLiteral("pay_no"), payNo},
                                                    {QStringLiteral("channel"), QStringLiteral("wechat")},
                                                    {QStringLiteral("amount_fen"), order.amountFen},
                                                    {QStringLiteral("user_id"), order.userId}},
                                        delivery.traceId);
        if (!outboxed.ok())
            return outboxed.error();
        if (auto paid = tx.markPaymentRecordPaid(paymentNo); !paid.ok())
            return paid.error();
        if (auto processed = tx.markProcessed(core::Channel::WeChat, payNo, QStringLiteral("processed"));
            !processed.ok())
            return processed.error();
        return {};
    });
    if (!committed.ok())
        return committed.error();
    return store.decideDelivery(*appended, Layer::None, 200, QStringLiteral("processed"));
}

/// The request bytes split into header pairs and body, as the agent stores a delivery.
void splitRequest(const QByteArray &request, QList<QPair<QByteArray, QByteArray>> *headers, QByteArray *body)
{
    const qsizetype headEnd = request.indexOf("\r\n\r\n");
    const QList<QByteArray> lines = request.left(headEnd).split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0)
            headers->append({lines[i].left(colon).trimmed(), lines[i].mid(colon + 1).trimmed()});
    }
    *body = request.mid(headEnd + 4);
}

} // namespace

LoadResult runDirectSqlLimit(const DirectSqlOptions &options)
{
    auto url = config::DatabaseUrl::parse(options.databaseUrl);
    if (!url.ok()) {
        LoadResult failed;
        failed.failureSamples << url.error().internalMessage;
        return failed;
    }
    sql::Database database(sql::DatabaseOptions{*url});
    sql::SqlCallbackStore callbacks(database);
    auto prepared = prepareBenchSqlOrders(database, options.prefix, options.count, options.skus, options.threads);
    if (!prepared.ok()) {
        LoadResult failed;
        failed.failed = 1;
        failed.failureSamples << QStringLiteral("preparing the direct-SQL orders: ") + prepared.error().internalMessage;
        return failed;
    }
    const std::vector<BenchSqlOrder> orders = std::move(prepared).value();
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    splitRequest(options.sampleRequest, &headers, &body);
    return onThreads(options.threads, options.count,
                     [&](qint64 i) { return payOnce(callbacks, options, orders[std::size_t(i)], headers, body, i); });
}

} // namespace payonce::bench
