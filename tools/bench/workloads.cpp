#include "workloads.h"

#include "agentprocess.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::bench {

namespace {

QString describe(const char *what, const HttpReply &reply)
{
    return QStringLiteral("%1: HTTP %2 layer '%3' %4")
        .arg(QLatin1String(what))
        .arg(reply.status)
        .arg(QString::fromLatin1(reply.layer), QString::fromUtf8(reply.body.left(300)));
}

class SingleRequest final : public Exchange {
public:
    using Check = std::function<QString(const HttpReply &)>; // empty: fine
    SingleRequest(QByteArray request, Check check) : m_request(std::move(request)), m_check(std::move(check)) {}
    QByteArray firstRequest() override { return m_request; }
    ExchangeStep onReply(const HttpReply &reply) override
    {
        const QString failure = m_check(reply);
        return failure.isEmpty() ? ExchangeStep::done() : ExchangeStep::failed(failure);
    }

private:
    QByteArray m_request;
    Check m_check;
};

class ConfirmExchange final : public Exchange {
public:
    explicit ConfirmExchange(BenchOrder *order) : m_order(order) {}
    QByteArray firstRequest() override
    {
        const QByteArray body =
            QJsonDocument(QJsonObject{{QStringLiteral("order_no"), m_order->orderNo}}).toJson(QJsonDocument::Compact);
        return httpRequest("POST", "/api/v1/payments/token", userHeader(), body);
    }
    ExchangeStep onReply(const HttpReply &reply) override
    {
        if (!m_tokenTaken) {
            m_tokenTaken = true;
            const QString token =
                QJsonDocument::fromJson(reply.body).object().value(QStringLiteral("token")).toString();
            if (reply.status != 201 || token.isEmpty())
                return ExchangeStep::failed(describe("token", reply));
            const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                                              {QStringLiteral("order_no"), m_order->orderNo},
                                                              {QStringLiteral("channel"), QStringLiteral("wechat")}})
                                        .toJson(QJsonDocument::Compact);
            return ExchangeStep::next(
                httpRequest("POST", "/api/v1/payments/confirm",
                            userHeader() + "Idempotency-Key: " + m_order->orderNo.toUtf8() + "\r\n", body));
        }
        const QString paymentNo =
            QJsonDocument::fromJson(reply.body).object().value(QStringLiteral("payment_no")).toString();
        if (reply.status != 200 || reply.layer != "none" || paymentNo.isEmpty())
            return ExchangeStep::failed(describe("confirm", reply));
        m_order->paymentNo = paymentNo;
        return ExchangeStep::done();
    }

private:
    QByteArray userHeader() const { return "X-User-Id: " + QByteArray::number(m_order->userId) + "\r\n"; }
    BenchOrder *m_order;
    bool m_tokenTaken = false;
};

} // namespace

std::unique_ptr<Exchange> IndexedWorkload::next()
{
    const qint64 index = m_next.fetch_add(1);
    if (m_count <= 0 || (!m_cycle && index >= m_count))
        return nullptr;
    return m_factory(index % m_count);
}

QByteArray orderBody(const BenchOrder &order)
{
    return QByteArrayLiteral("{\"order_no\":\"") + order.orderNo.toUtf8()
           + "\",\"user_id\":" + QByteArray::number(order.userId) + ",\"amount\":\"1.00\",\"items\":[{\"sku_id\":\""
           + order.skuId.toUtf8() + "\",\"qty\":1}],\"reward_coupon_template\":\"WELCOME10\",\"reward_points\":100}";
}

std::unique_ptr<Exchange> createOrderExchange(const BenchOrder &order)
{
    return std::make_unique<SingleRequest>(
        httpRequest("POST", "/api/v1/orders", "Authorization: Bearer " + kOperatorToken + "\r\n", orderBody(order)),
        [](const HttpReply &reply) { return reply.status == 201 ? QString() : describe("create order", reply); });
}

std::unique_ptr<Exchange> confirmExchange(BenchOrder *order)
{
    return std::make_unique<ConfirmExchange>(order);
}

std::unique_ptr<Exchange> notificationExchange(QByteArray request, NotificationExpectation expectation)
{
    return std::make_unique<SingleRequest>(std::move(request), [expectation](const HttpReply &reply) {
        bool layerFits = !reply.layer.isEmpty();
        if (expectation == NotificationExpectation::FirstTime)
            layerFits = reply.layer == "none";
        else if (expectation == NotificationExpectation::Duplicate)
            layerFits = layerFits && reply.layer != "none";
        if (reply.status != 200 || !layerFits)
            return describe(expectation == NotificationExpectation::Duplicate ? "duplicate callback" : "callback",
                            reply);
        return QString();
    });
}

QString benchSkuOf(qint64 index, int skus)
{
    return QStringLiteral("BENCH-SKU-") + QString::number(index % std::max(skus, 1));
}

bool putBenchSkus(int port, int skus, QString *error)
{
    for (int k = 0; k < std::max(skus, 1); ++k) {
        const testsupport::HttpAnswer sku = testsupport::httpCall(
            port, "PUT", QStringLiteral("/api/v1/skus/") + benchSkuOf(k, skus), R"({"stock": 1000000000})",
            {{"Authorization", "Bearer " + kOperatorToken}});
        if (sku.status != 200) {
            *error = QStringLiteral("PUT sku: HTTP %1 %2").arg(sku.status).arg(QString::fromUtf8(sku.body));
            return false;
        }
    }
    return true;
}

std::unique_ptr<Exchange> healthzExchange()
{
    static const QByteArray request = httpRequest("GET", "/healthz", {});
    return std::make_unique<SingleRequest>(
        request, [](const HttpReply &reply) { return reply.status == 200 ? QString() : describe("healthz", reply); });
}

} // namespace payonce::bench
