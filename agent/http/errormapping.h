#pragma once

#include "httptypes.h"

#include "core/callback/callbackpipeline.h"
#include "core/common/error.h"
#include "core/confirm/paymentoutcome.h"

#include <QByteArray>
#include <QString>

namespace payonce::http {

/// The one place that turns error codes into HTTP statuses (style.md "A request's way
/// through the files"): core::ErrorCode for errors coming up from core and adapters, and
/// the contract's snake_case API codes (docs/openapi.yaml) for errors the HTTP layer decides itself.
/// No other file of the agent writes an error status number.
///
/// Codes this layer adds to the contract (docs/openapi.yaml allows extending it): 411
/// `length_required` (chunked request bodies are refused: the body limit is enforced on
/// Content-Length before the body is read), 431 `header_too_large`, 503
/// `too_many_connections`, 429 `too_many_requests` (failed-authentication limiter),
/// 404 `not_found` / 405 `method_not_allowed` (unknown path / wrong method), 500
/// `internal`, 503 `unavailable`, 404 `sku_not_found` (GET /api/v1/skus/{sku_id} of an
/// unknown SKU), 409 `patrol_running` (POST /api/v1/reconciliation/run while a run is going), 409
/// `close_running` (POST /api/v1/orders/close-expired while the closer runs).

/// The HTTP status for a core error code.
int httpStatus(core::ErrorCode code);
/// The contract's wire code for a core error code (InvalidInput → "invalid_request",
/// Busy → "request_in_progress", …).
QString apiErrorCode(core::ErrorCode code);
/// The HTTP status for a contract error code; 500 for a code this table does not know
/// (a programming error, logged).
int httpStatus(QStringView apiCode);
/// Whether apiCode is in the table (for tests and asserts).
bool isKnownApiErrorCode(QStringView apiCode);
/// Every API code in the table, for tests.
QStringList knownApiErrorCodes();

/// `{"error":{"code":"<code>","message":"<message>"}}`, compact UTF-8 JSON.
QByteArray errorBody(const QString &apiCode, const QString &message);

/// A JSON error reply with the status of apiCode.
HttpReply errorReply(const QString &apiCode, const QString &message);
/// A JSON error reply for an error from core or an adapter: its public message, the
/// status of its code. Busy and Unavailable carry Retry-After: 1.
HttpReply errorReply(const core::Error &error);

/// The contract status of a payment-path outcome (token issue, confirm): 201 for a
/// token, 200 for a created or duplicate payment, the error code's status otherwise.
int httpStatus(core::PaymentOutcomeCode code);

/// Whether the contract wants X-Payonce-Layer on every response to this request target:
/// the payment and callback requests (/api/v1/payments/…, /api/v1/callbacks/<channel>).
bool carriesLayerHeader(QByteArrayView target);

/// The contract status of a callback outcome: 200 for SUCCESS (every duplicate too), 401
/// for a refused signature, 400 for a notification we can never accept, 500 — retryable —
/// when it could not be made durable.
int httpStatus(core::CallbackOutcomeCode code);

/// The reason phrase of a status ("Payload Too Large"); "Unknown" for others.
QByteArray reasonPhrase(int status);

/// A complete HTTP/1.1 error response with `Connection: close`, for the connection guard,
/// which answers before QtHttpServer has seen the request.
QByteArray rawErrorResponse(const QString &apiCode, const QString &message,
                            const QList<QPair<QByteArray, QByteArray>> &extraHeaders = {});

} // namespace payonce::http
