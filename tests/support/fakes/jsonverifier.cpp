#include "jsonverifier.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::testsupport {

using namespace payonce::core;

Result<PaymentNotification> JsonVerifier::verify(const RawDelivery &delivery, bool checkTimeWindow, qint64) const
{
    if (!delivery.header("X-Forged").isEmpty())
        return Error::make(ErrorCode::BadSignature, QStringLiteral("forged"));
    auto verified = decode(delivery, checkTimeWindow);
    if (verified.ok() && m_remembersCopies) {
        std::lock_guard guard(m_mutex);
        m_verifiedBodies.insert(delivery.body);
    }
    return verified;
}

std::optional<Result<PaymentNotification>> JsonVerifier::verifyFromMemory(const RawDelivery &delivery,
                                                                          bool checkTimeWindow, qint64) const
{
    {
        std::lock_guard guard(m_mutex);
        if (!m_verifiedBodies.contains(delivery.body))
            return std::nullopt;
    }
    return decode(delivery, checkTimeWindow);
}

Result<PaymentNotification> JsonVerifier::decode(const RawDelivery &delivery, bool checkTimeWindow) const
{
    if (checkTimeWindow && !delivery.header("X-Outside-Window").isEmpty())
        return Error::make(ErrorCode::BadSignature, QStringLiteral("outside the time window"));
    const QJsonObject o = QJsonDocument::fromJson(delivery.body).object();
    if (o.isEmpty())
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("not json"));
    PaymentNotification n;
    n.channel = delivery.channel;
    n.payNo = o.value(QStringLiteral("pay_no")).toString();
    n.paymentNo = o.value(QStringLiteral("out_trade_no")).toString();
    n.amountFen = o.value(QStringLiteral("amount")).toInteger();
    n.currency = o.value(QStringLiteral("currency")).toString(QStringLiteral("CNY"));
    n.merchantId = o.value(QStringLiteral("mchid")).toString(m_mchId);
    n.tradeState = o.value(QStringLiteral("state")).toString(QStringLiteral("SUCCESS"));
    n.paid = n.tradeState == QLatin1String("SUCCESS");
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

} // namespace payonce::testsupport
