#include "core/confirm/paymentoutcome.h"

#include <QJsonDocument>

#include <array>
#include <utility>

namespace payonce::core {

namespace {
constexpr std::array<std::pair<PaymentOutcomeCode, const char *>, 12> kNames{{
    {PaymentOutcomeCode::TokenIssued, "token_issued"},
    {PaymentOutcomeCode::Created, "created"},
    {PaymentOutcomeCode::DuplicatePayment, "duplicate_payment"},
    {PaymentOutcomeCode::IdempotencyKeyReused, "idempotency_key_reused"},
    {PaymentOutcomeCode::RequestInProgress, "request_in_progress"},
    {PaymentOutcomeCode::DuplicateRequest, "duplicate_request"},
    {PaymentOutcomeCode::OrderStateConflict, "order_state_conflict"},
    {PaymentOutcomeCode::GatewayUnavailable, "gateway_unavailable"},
    {PaymentOutcomeCode::OrderNotFound, "order_not_found"},
    {PaymentOutcomeCode::OrderNotYours, "order_not_yours"},
    {PaymentOutcomeCode::ServiceUnavailable, "service_unavailable"},
    {PaymentOutcomeCode::Internal, "internal_error"},
}};

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}
} // namespace

QString paymentOutcomeName(PaymentOutcomeCode code)
{
    for (const auto &[value, name] : kNames) {
        if (value == code)
            return QString::fromLatin1(name);
    }
    Q_UNREACHABLE();
}

std::optional<PaymentOutcomeCode> paymentOutcomeFromName(QStringView name)
{
    for (const auto &[value, text] : kNames) {
        if (name == QLatin1String(text))
            return value;
    }
    return std::nullopt;
}

PaymentOutcome PaymentOutcome::error(PaymentOutcomeCode code, Layer layer, const QString &message,
                                     const QJsonObject &extra)
{
    QJsonObject error = extra;
    error.insert(QStringLiteral("code"), paymentOutcomeName(code));
    error.insert(QStringLiteral("message"), message);
    return PaymentOutcome{code, layer, compact(QJsonObject{{QStringLiteral("error"), error}}), false, std::nullopt};
}

PaymentOutcome PaymentOutcome::success(PaymentOutcomeCode code, Layer layer, const QJsonObject &body)
{
    return PaymentOutcome{code, layer, compact(body), false, std::nullopt};
}

} // namespace payonce::core
