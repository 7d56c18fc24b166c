#pragma once

#include "shared/layer.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace payonce::core {

/// How a payment request (token issue, confirm) ended, protocol-agnostic. The HTTP
/// layer maps each code to its contract status in one place (errormapping.cpp); the
/// code's wire name is what L1 stores, so a replay maps to exactly the first status.
enum class PaymentOutcomeCode {
    TokenIssued,          ///< 201 {"token","expires_in"}
    Created,              ///< 200 first confirm: {"order_no","payment_no","status","code_url","duplicate":false}
    DuplicatePayment,     ///< 200 a live payment record exists: the record, "duplicate":true (layer unique_index)
    IdempotencyKeyReused, ///< 422 same key, different body (layer idempotency_key)
    RequestInProgress,    ///< 409 + Retry-After: same key still running (idempotency_key) or lock held (lock)
    DuplicateRequest,     ///< 409 token already used or unknown (layer token)
    OrderStateConflict,   ///< 409 order not PENDING, with "status" (layer state_machine)
    GatewayUnavailable,   ///< 503 breaker open or gateway failed after retries; order back to PENDING
    OrderNotFound,        ///< 404
    OrderNotYours,        ///< 403
    ServiceUnavailable,   ///< 503 storage failed before anything was done; retrying is safe
    Internal,             ///< 500 a bug
};

/// The wire name: "token_issued", "created", "duplicate_payment", "idempotency_key_reused",
/// "request_in_progress", "duplicate_request", "order_state_conflict",
/// "gateway_unavailable", "order_not_found", "order_not_yours", "service_unavailable",
/// "internal_error". For the error codes it is also the body's error.code.
QString paymentOutcomeName(PaymentOutcomeCode code);
std::optional<PaymentOutcomeCode> paymentOutcomeFromName(QStringView name);

/// One answer of the payment path. `body` is the exact JSON sent (bytes, so that a replay
/// is byte-identical); `layer` is the layer that decided (X-Payonce-Layer); `replayed`
/// marks an L1 replay (Idempotent-Replayed: true); retryAfterSeconds is set for
/// RequestInProgress.
struct PaymentOutcome {
    PaymentOutcomeCode code = PaymentOutcomeCode::Internal;
    Layer layer = Layer::None;
    QByteArray body;
    bool replayed = false;
    std::optional<int> retryAfterSeconds;

    /// {"error":{"code":<name>,"message":<message>, ...extra}}
    static PaymentOutcome error(PaymentOutcomeCode code, Layer layer, const QString &message,
                                const QJsonObject &extra = {});
    static PaymentOutcome success(PaymentOutcomeCode code, Layer layer, const QJsonObject &body);
};

} // namespace payonce::core
