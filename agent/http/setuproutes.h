#pragma once

namespace payonce::core {
class SetupService;
}

namespace payonce::http {

class HttpServer;

/// The set-up API of docs/openapi.yaml, "Orders and stock":
///   PUT  /api/v1/skus/<sku_id>      (operator) {"stock":100} → 200 {"sku_id","stock"}
///   GET  /api/v1/skus/<sku_id>      (viewer)   → 200 {"sku_id","stock"}; 404 sku_not_found
///   POST /api/v1/orders             (operator) → 201 the order as GET shows it (PENDING)
///   GET  /api/v1/orders/<order_no>  (viewer)   → 200 the order detail; 404 order_not_found
/// Routes only decode (parseJsonObject, core::setupcodec) and answer; the rules are
/// core::SetupService's and the statuses errormapping's. Errors: 400 invalid_request
/// (naming the field), 400 invalid_amount, 409 order_exists, 413 payload_too_large (the
/// connection guard), 401/403 from the server's roles. No X-Payonce-Layer: these are not
/// payment requests. `service` must outlive the server; its calls run on the worker pool.
void registerSetupRoutes(HttpServer &server, core::SetupService &service);

} // namespace payonce::http
