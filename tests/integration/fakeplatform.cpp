#include "fakeplatform.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

#include <thread>

namespace payonce::testsupport {

using namespace payonce::core;

Result<PaymentNotification> JsonVerifier::verify(const RawDelivery &delivery, bool, qint64) const
{
    const QJsonObject o = QJsonDocument::fromJson(delivery.body).object();
    if (o.isEmpty())
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("not json"));
    PaymentNotification n;
    n.channel = delivery.channel;
    n.payNo = o.value(QStringLiteral("pay_no")).toString();
    n.paymentNo = o.value(QStringLiteral("out_trade_no")).toString();
    n.amountFen = o.value(QStringLiteral("amount")).toInteger();
    n.currency = QStringLiteral("CNY");
    n.merchantId = m_mchId;
    n.tradeState = QStringLiteral("SUCCESS");
    n.paid = true;
    return n;
}

RawDelivery jsonDelivery(const QString &payNo, const QString &paymentNo, qint64 amountFen)
{
    RawDelivery raw;
    raw.channel = Channel::WeChat;
    raw.body = QJsonDocument(QJsonObject{{QStringLiteral("pay_no"), payNo},
                                         {QStringLiteral("out_trade_no"), paymentNo},
                                         {QStringLiteral("amount"), amountFen}})
                   .toJson(QJsonDocument::Compact);
    raw.receivedAtMs = QDateTime::currentMSecsSinceEpoch();
    return raw;
}

void FakePlatform::set(const QString &paymentNo, Trade trade)
{
    std::lock_guard guard(m_mutex);
    m_trades[paymentNo] = std::move(trade);
}

FakePlatform::Trade FakePlatform::trade(const QString &paymentNo)
{
    std::lock_guard guard(m_mutex);
    return m_trades[paymentNo];
}

QStringList FakePlatform::calls()
{
    std::lock_guard guard(m_mutex);
    return m_calls;
}

void FakePlatform::setOnClose(std::function<void(const QString &)> onClose)
{
    std::lock_guard guard(m_mutex);
    m_onClose = std::move(onClose);
}

Result<GatewayOrder> FakePlatform::createOrder(const GatewayOrderRequest &)
{
    return Error::make(ErrorCode::Internal, QStringLiteral("settling and closing never create trades"));
}

Result<GatewayTrade> FakePlatform::query(const QString &paymentNo)
{
    if (m_queryDelay.count() > 0)
        std::this_thread::sleep_for(m_queryDelay * QRandomGenerator::global()->bounded(1, 4));
    std::lock_guard guard(m_mutex);
    m_calls.append(QStringLiteral("query ") + paymentNo);
    const Trade &t = m_trades[paymentNo];
    if (t.queryFails)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("platform timeout"));
    GatewayTrade out;
    out.state = t.state;
    if (t.state == GatewayTradeState::Paid) {
        out.payNo = t.payNo;
        out.amountFen = m_paidAmountFen;
    }
    return out;
}

Result<GatewayRefund> FakePlatform::refund(const GatewayRefundRequest &)
{
    return Error::make(ErrorCode::Internal, QStringLiteral("the patrol and the closer never refund"));
}

Result<GatewayRefund> FakePlatform::queryRefund(const QString &, const QString &)
{
    return Error::make(ErrorCode::Internal, QStringLiteral("the patrol and the closer never ask about refunds"));
}

Result<void> FakePlatform::close(const QString &paymentNo)
{
    std::function<void(const QString &)> onClose;
    {
        std::lock_guard guard(m_mutex);
        onClose = m_onClose;
    }
    if (onClose)
        onClose(paymentNo);
    std::lock_guard guard(m_mutex);
    m_calls.append(QStringLiteral("close ") + paymentNo);
    Trade &t = m_trades[paymentNo];
    if (t.closeFails)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("platform timeout"));
    if (t.payOnClose)
        t.state = GatewayTradeState::Paid;
    if (t.state == GatewayTradeState::Paid)
        return Error::make(ErrorCode::Conflict, QStringLiteral("ORDERPAID"));
    t.state = GatewayTradeState::Closed;
    return {};
}

} // namespace payonce::testsupport
