#include "core/confirm/tokenissuer.h"

#include "core/confirm/confirmpipeline.h"
#include "core/ports/paymentstore.h"
#include "core/ports/tokenstore.h"

#include "logging/categories.h"

#include <QJsonObject>
#include <QRandomGenerator>

namespace payonce::core {

using Code = PaymentOutcomeCode;

PaymentOutcome TokenIssuer::issueToken(qint64 userId, const QString &orderNo)
{
    auto order = m_payments.findOrder(orderNo);
    if (!order.ok()) {
        qCWarning(payonce::lcCore) << "token: storage failed:" << order.error().internalMessage;
        return PaymentOutcome::error(Code::ServiceUnavailable, Layer::None,
                                     QStringLiteral("the payment service is temporarily unavailable; retry later"));
    }
    if (!order.value())
        return PaymentOutcome::error(Code::OrderNotFound, Layer::Rejected, QStringLiteral("no order %1").arg(orderNo));
    if (order.value()->userId != userId)
        return PaymentOutcome::error(Code::OrderNotYours, Layer::Rejected,
                                     QStringLiteral("the order belongs to another user"));
    if (order.value()->status != OrderStatus::Pending) {
        const QString status = orderStatusName(order.value()->status);
        return PaymentOutcome::error(Code::OrderStateConflict, Layer::StateMachine,
                                     QStringLiteral("the order is %1, not PENDING").arg(status),
                                     QJsonObject{{QStringLiteral("status"), status}});
    }
    QString token;
    auto issued = m_tokens.issue(paymentTokenScope(userId, orderNo), m_ttl);
    if (issued.ok()) {
        token = issued.value();
    } else {
        qCWarning(payonce::lcCore) << "token: key store unavailable, answering an unstored token:"
                                   << issued.error().internalMessage;
        quint32 words[4];
        QRandomGenerator::system()->fillRange(words);
        for (quint32 word : words)
            token += QString::number(word, 16).rightJustified(8, QLatin1Char('0'));
    }
    return PaymentOutcome::success(
        Code::TokenIssued, Layer::None,
        QJsonObject{{QStringLiteral("token"), token}, {QStringLiteral("expires_in"), qint64(m_ttl.count())}});
}

} // namespace payonce::core
