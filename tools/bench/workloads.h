#pragma once

#include "httpexchange.h"

#include <QByteArray>
#include <QList>
#include <QMutex>
#include <QString>

#include <atomic>
#include <functional>

namespace payonce::bench {

/// The operations of a phase by index: `count` of them (the phase ends when they are
/// handed out), or endless when `cycle` is set (indexes wrap; the phase ends by time).
class IndexedWorkload final : public Workload {
public:
    using Factory = std::function<std::unique_ptr<Exchange>(qint64 index)>;
    IndexedWorkload(qint64 count, bool cycle, Factory factory)
        : m_count(count), m_cycle(cycle), m_factory(std::move(factory))
    {
    }
    std::unique_ptr<Exchange> next() override;

private:
    std::atomic<qint64> m_next{0};
    const qint64 m_count;
    const bool m_cycle;
    Factory m_factory;
};

/// An order of the benchmark: one unit of the benchmark SKU for `amountFen`, with a
/// coupon and points to grant, so paying it touches every effect of the callback path.
struct BenchOrder {
    QString orderNo;
    qint64 userId = 0;
    QString paymentNo; ///< set by a confirm
    QString skuId;     ///< the SKU it buys one unit of (benchSkuOf)
};

constexpr qint64 kOrderAmountFen = 100;
/// The SKU order `index` buys when the run spreads its orders over `skus` SKUs.
QString benchSkuOf(qint64 index, int skus);
inline const QByteArray kOperatorToken = "desk-token";

/// The JSON body of POST /api/v1/orders for `order`.
QByteArray orderBody(const BenchOrder &order);

/// POST /api/v1/orders (operator), expecting 201.
std::unique_ptr<Exchange> createOrderExchange(const BenchOrder &order);
/// POST /api/v1/payments/token, then POST /api/v1/payments/confirm on WeChat with the
/// order_no as Idempotency-Key, expecting 201 then 200 with layer "none"; the payment_no
/// it answers is written to *order (each operation owns its order).
std::unique_ptr<Exchange> confirmExchange(BenchOrder *order);
/// What a notification's reply must say besides 200: FirstTime, X-Payonce-Layer "none"
/// (processed now); Duplicate, any other layer (a re-send may be stopped by unique_index
/// or, racing its original, by lock or state_machine); Either, any layer.
enum class NotificationExpectation {
    FirstTime,
    Duplicate,
    Either
};
/// A notification request sent as it is (implicitly shared, so cheap to pass).
std::unique_ptr<Exchange> notificationExchange(QByteArray request, NotificationExpectation expectation);
/// PUT /api/v1/skus/<sku> for each of the `skus` SKUs, with stock for any run; false and
/// *error otherwise.
bool putBenchSkus(int port, int skus, QString *error);
/// GET /healthz, expecting 200.
std::unique_ptr<Exchange> healthzExchange();

} // namespace payonce::bench
