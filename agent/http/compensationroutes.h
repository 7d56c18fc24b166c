#pragma once

#include "httpserver.h"

namespace payonce::core {
class RefundService;
class Clock;
class CompensationService;
class OrderRepository;
} // namespace payonce::core

namespace payonce::http {

/// Compensations with four-eyes approval (docs/openapi.yaml, "Operations"), over core::CompensationService,
/// which writes every audit line inside its own transactions:
/// - GET /api/v1/compensations?status=proposed|approved|rejected|executed|failed&limit=N
///   (viewer) → [{"id","kind","order_no","finding_id","status","proposed_by",
///   "proposal_reason","decided_by","decision_reason","result","created_at"}], newest first.
/// - POST /api/v1/compensations (operator) {"kind","order_no","reason"} → 201 with the row;
///   an unknown order 404 order_not_found.
/// - POST /api/v1/compensations/{id}/approve and /reject (approver) {"reason"} → 200 with the
///   row as it stands (an approval executes it in the same transaction; approving again
///   executes nothing more); the proposer deciding their own 403 four_eyes, an unknown id 404
///   not_found, the opposite decision already taken 409 conflict.
/// With `refunds`, approving a refund compensation submits its refund to the platform
/// at once and the answer carries "refund" (its refund_no and status).
void registerCompensationRoutes(HttpServer &server, core::CompensationService &compensations,
                                core::OrderRepository &orders, const core::Clock &clock,
                                core::RefundService *refunds = nullptr);

} // namespace payonce::http
