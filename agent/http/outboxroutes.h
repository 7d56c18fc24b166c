#pragma once

#include "httpserver.h"

namespace payonce::core {
class AuditWriter;
class Clock;
class OutboxStore;
} // namespace payonce::core

namespace payonce::http {

/// The outbox as the desk sees it (docs/openapi.yaml, "Operations"):
/// - GET /api/v1/outbox?status=pending|dead|delivered&limit=N (viewer; every status when
///   absent, limit 1-1000, default 100) → [{"id","event_id","event_type","aggregate_id",
///   "status","attempts","next_attempt_at","last_error","redriven","trace_id","created_at",
///   "delivered_at","payload"}], newest first.
/// - POST /api/v1/outbox/{id}/redrive (operator) {"reason"} → 200 with the event, pending
///   again and marked redriven; 404 not_found for an unknown id, 409 conflict when it is not
///   dead. The audit line (actor, "outbox.redrive", "outbox:<id>", before, after, reason) is
///   written in the redrive's own transaction.
void registerOutboxRoutes(HttpServer &server, core::OutboxStore &outbox, core::AuditWriter &audit,
                          const core::Clock &clock);

} // namespace payonce::http
