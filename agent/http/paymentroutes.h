#pragma once

#include "httpserver.h"

namespace payonce::core {
class ConfirmPipeline;
class TokenIssuer;
} // namespace payonce::core

namespace payonce::http {

/// The user's click (docs/openapi.yaml, "Paying"): POST /api/v1/payments/token and
/// POST /api/v1/payments/confirm. The routes only decode and encode — X-User-Id,
/// Idempotency-Key and the JSON body — and hand the request to the core; every reply
/// names the deciding layer in X-Payonce-Layer ("rejected" for input refused here).
/// The services must outlive the server.
void registerPaymentRoutes(HttpServer &server, core::TokenIssuer &tokens, core::ConfirmPipeline &confirm);

} // namespace payonce::http
