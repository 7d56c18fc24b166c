#pragma once

#include "httpserver.h"

namespace payonce::core {
class AuditWriter;
class Clock;
class OrderCloser;
} // namespace payonce::core

namespace payonce::http {

/// POST /api/v1/orders/close-expired (operator) {"reason"} runs the order closer once on the
/// worker that took the request — PENDING orders past close.pending_timeout_ms are closed
/// at their platform, then CLOSED — and answers 200 {"ran_at","pending_timeout_ms",
/// "closed","settled","left","moved_on","accept_only","orders":[{"order_no","action","why"}]}.
/// Audited after the run as (actor, "orders.close_expired", "closer", -, the counts,
/// reason); each closed order has its own "order.close" row by "system:closer". While this
/// agent's closer is running (its timer's run or another operator's), 409 close_running
/// and nothing is run or written.
void registerCloseRoutes(HttpServer &server, core::OrderCloser &closer, core::AuditWriter &audit,
                         const core::Clock &clock);

} // namespace payonce::http
