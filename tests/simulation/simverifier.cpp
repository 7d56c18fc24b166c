#include "simverifier.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::simulation {

core::Result<core::PaymentNotification> SimVerifier::verify(const core::RawDelivery &delivery, bool, qint64) const
{
    auto verified = decode(delivery);
    if (verified.ok()) {
        std::lock_guard guard(m_mutex);
        m_verified.insert(delivery.body);
    }
    return verified;
}

std::optional<core::Result<core::PaymentNotification>> SimVerifier::verifyFromMemory(const core::RawDelivery &delivery,
                                                                                     bool, qint64) const
{
    {
        std::lock_guard guard(m_mutex);
        if (!m_verified.contains(delivery.body))
            return std::nullopt;
    }
    return decode(delivery);
}

core::Result<core::PaymentNotification> SimVerifier::decode(const core::RawDelivery &delivery) const
{
    const QJsonObject o = QJsonDocument::fromJson(delivery.body).object();
    if (o.value(QStringLiteral("signature")).toString() != u"valid")
        return core::Error::make(core::ErrorCode::BadSignature, QStringLiteral("signature does not verify"));
    core::PaymentNotification n;
    n.channel = delivery.channel;
    n.payNo = o.value(QStringLiteral("pay_no")).toString();
    n.paymentNo = o.value(QStringLiteral("out_trade_no")).toString();
    n.amountFen = o.value(QStringLiteral("amount")).toInteger();
    n.currency = o.value(QStringLiteral("currency")).toString();
    n.merchantId = o.value(QStringLiteral("merchant")).toString();
    n.tradeState = o.value(QStringLiteral("trade_state")).toString();
    n.paid = n.tradeState == u"SUCCESS";
    n.eventId = n.payNo;
    if (n.payNo.isEmpty() || n.paymentNo.isEmpty() || n.amountFen <= 0)
        return core::Error::make(core::ErrorCode::InvalidInput, QStringLiteral("notification fields missing"));
    return n;
}

} // namespace payonce::simulation
