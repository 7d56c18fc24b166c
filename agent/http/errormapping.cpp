#include "errormapping.h"

#include "logging/categories.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <array>

namespace payonce::http {

namespace {

struct ApiCodeStatus {
    const char16_t *code;
    int status;
};

// The contract's codes (docs/openapi.yaml) and the ones this layer adds (see errormapping.h).
constexpr std::array kApiCodes{
    ApiCodeStatus{u"invalid_request", 400},
    ApiCodeStatus{u"invalid_amount", 400},
    ApiCodeStatus{u"invalid_user", 400},
    ApiCodeStatus{u"idempotency_key_missing", 400},
    ApiCodeStatus{u"invalid_idempotency_key", 400},
    ApiCodeStatus{u"qa_target_not_allowed", 400},
    ApiCodeStatus{u"bad_signature", 401},
    ApiCodeStatus{u"unauthenticated", 401},
    ApiCodeStatus{u"forbidden", 403},
    ApiCodeStatus{u"order_not_yours", 403},
    ApiCodeStatus{u"four_eyes", 403},
    ApiCodeStatus{u"not_found", 404},
    ApiCodeStatus{u"order_not_found", 404},
    ApiCodeStatus{u"sku_not_found", 404},
    ApiCodeStatus{u"method_not_allowed", 405},
    ApiCodeStatus{u"order_exists", 409},
    ApiCodeStatus{u"request_in_progress", 409},
    ApiCodeStatus{u"duplicate_request", 409},
    ApiCodeStatus{u"order_state_conflict", 409},
    ApiCodeStatus{u"conflict", 409},
    ApiCodeStatus{u"stale_fence", 409},
    ApiCodeStatus{u"patrol_running", 409},
    ApiCodeStatus{u"close_running", 409},
    ApiCodeStatus{u"scenario_running", 409},
    ApiCodeStatus{u"scenario_not_found", 404},
    ApiCodeStatus{u"length_required", 411},
    ApiCodeStatus{u"payload_too_large", 413},
    ApiCodeStatus{u"idempotency_key_reused", 422},
    ApiCodeStatus{u"upgrade_required", 426},
    ApiCodeStatus{u"too_many_requests", 429},
    ApiCodeStatus{u"too_many_streams", 429},
    ApiCodeStatus{u"header_too_large", 431},
    ApiCodeStatus{u"internal", 500},
    ApiCodeStatus{u"internal_error", 500},
    ApiCodeStatus{u"service_unavailable", 503},
    ApiCodeStatus{u"breaker_not_found", 404},
    ApiCodeStatus{u"gateway_unavailable", 503},
    ApiCodeStatus{u"unavailable", 503},
    ApiCodeStatus{u"too_many_connections", 503},
    ApiCodeStatus{u"server_busy", 503},
    // Refunds of part of a payment (POST /api/v1/compensations, kind refund, and its approval).
    ApiCodeStatus{u"refund_amount_required", 400},
    ApiCodeStatus{u"refund_sku_not_in_order", 400},
    ApiCodeStatus{u"refund_items_exceed_order", 400},
    ApiCodeStatus{u"refund_exceeds_payment", 409},
    ApiCodeStatus{u"refund_in_flight", 409},
    ApiCodeStatus{u"order_not_refundable", 409},
};

} // namespace

int httpStatus(core::ErrorCode code)
{
    return httpStatus(apiErrorCode(code));
}

QString apiErrorCode(core::ErrorCode code)
{
    using core::ErrorCode;
    switch (code) {
    case ErrorCode::InvalidInput: return QStringLiteral("invalid_request");
    case ErrorCode::NotFound: return QStringLiteral("not_found");
    case ErrorCode::Duplicate: return QStringLiteral("duplicate_request");
    case ErrorCode::Conflict: return QStringLiteral("conflict");
    case ErrorCode::StaleFence: return QStringLiteral("stale_fence");
    // Contention: the contract's answer to a concurrent attempt (409, retry later).
    case ErrorCode::Busy: return QStringLiteral("request_in_progress");
    case ErrorCode::Unavailable: return QStringLiteral("unavailable");
    case ErrorCode::Unauthenticated: return QStringLiteral("unauthenticated");
    case ErrorCode::Forbidden: return QStringLiteral("forbidden");
    case ErrorCode::FourEyes: return QStringLiteral("four_eyes");
    case ErrorCode::BadSignature: return QStringLiteral("bad_signature");
    case ErrorCode::Misconfigured:
    case ErrorCode::SchemaTooNew:
    case ErrorCode::Internal: return QStringLiteral("internal");
    }
    Q_UNREACHABLE();
}

int httpStatus(QStringView apiCode)
{
    for (const auto &entry : kApiCodes) {
        if (apiCode == QStringView(entry.code))
            return entry.status;
    }
    qCWarning(lcHttp) << "error code without a status mapping:" << apiCode;
    return 500;
}

bool isKnownApiErrorCode(QStringView apiCode)
{
    for (const auto &entry : kApiCodes) {
        if (apiCode == QStringView(entry.code))
            return true;
    }
    return false;
}

QStringList knownApiErrorCodes()
{
    QStringList codes;
    for (const auto &entry : kApiCodes)
        codes << QString::fromUtf16(entry.code);
    return codes;
}

QByteArray errorBody(const QString &apiCode, const QString &message)
{
    const QJsonObject error{{QStringLiteral("code"), apiCode}, {QStringLiteral("message"), message}};
    return QJsonDocument(QJsonObject{{QStringLiteral("error"), error}}).toJson(QJsonDocument::Compact);
}

HttpReply errorReply(const QString &apiCode, const QString &message)
{
    HttpReply reply;
    reply.status = httpStatus(apiCode);
    reply.body = errorBody(apiCode, message);
    return reply;
}

HttpReply errorReply(const core::Error &error)
{
    const bool ownCode = !error.contractCode.isEmpty() && isKnownApiErrorCode(error.contractCode);
    HttpReply reply = errorReply(ownCode ? error.contractCode : apiErrorCode(error.code), error.publicMessage);
    if (error.isTransient())
        reply.setHeader(QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1"));
    return reply;
}

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 100: return QByteArrayLiteral("Continue");
    case 200: return QByteArrayLiteral("OK");
    case 201: return QByteArrayLiteral("Created");
    case 202: return QByteArrayLiteral("Accepted");
    case 204: return QByteArrayLiteral("No Content");
    case 400: return QByteArrayLiteral("Bad Request");
    case 401: return QByteArrayLiteral("Unauthorized");
    case 403: return QByteArrayLiteral("Forbidden");
    case 404: return QByteArrayLiteral("Not Found");
    case 405: return QByteArrayLiteral("Method Not Allowed");
    case 408: return QByteArrayLiteral("Request Timeout");
    case 409: return QByteArrayLiteral("Conflict");
    case 411: return QByteArrayLiteral("Length Required");
    case 413: return QByteArrayLiteral("Payload Too Large");
    case 422: return QByteArrayLiteral("Unprocessable Entity");
    case 426: return QByteArrayLiteral("Upgrade Required");
    case 429: return QByteArrayLiteral("Too Many Requests");
    case 431: return QByteArrayLiteral("Request Header Fields Too Large");
    case 500: return QByteArrayLiteral("Internal Server Error");
    case 502: return QByteArrayLiteral("Bad Gateway");
    case 503: return QByteArrayLiteral("Service Unavailable");
    case 504: return QByteArrayLiteral("Gateway Timeout");
    default: return QByteArrayLiteral("Unknown");
    }
}

QByteArray rawErrorResponse(const QString &apiCode, const QString &message,
                            const QList<QPair<QByteArray, QByteArray>> &extraHeaders)
{
    const int status = httpStatus(apiCode);
    const QByteArray body = errorBody(apiCode, message);
    QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status)
                     + "\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: "
                     + QByteArray::number(body.size())
                     + "\r\n"
                       "Connection: close\r\n";
    for (const auto &h : extraHeaders)
        out += h.first + ": " + h.second + "\r\n";
    out += "\r\n" + body;
    return out;
}

int httpStatus(core::PaymentOutcomeCode code)
{
    using C = core::PaymentOutcomeCode;
    switch (code) {
    case C::TokenIssued: return 201;
    case C::Created:
    case C::DuplicatePayment: return 200;
    default: return httpStatus(core::paymentOutcomeName(code));
    }
}

int httpStatus(core::CallbackOutcomeCode code)
{
    using C = core::CallbackOutcomeCode;
    switch (code) {
    case C::Success: return 200;
    case C::BadSignature: return 401;
    case C::InvalidNotification:
    case C::ContentMismatch:
    case C::UnknownOrder: return 400;
    case C::Unavailable:
    case C::Internal: return 500;
    }
    return 500;
}

bool carriesLayerHeader(QByteArrayView target)
{
    return target.startsWith("/api/v1/payments/") || target.startsWith("/api/v1/callbacks/wechat")
           || target.startsWith("/api/v1/callbacks/alipay");
}

} // namespace payonce::http
