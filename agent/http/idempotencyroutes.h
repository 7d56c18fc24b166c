#pragma once

#include "httpserver.h"

namespace payonce::core {
class AuditWriter;
class Clock;
class IdempotencyStore;
} // namespace payonce::core

namespace payonce::http {

/// The L1 inspector (docs/openapi.yaml, "Operations"):
///
/// - GET /api/v1/idempotency-keys?user_id=...&key=... (viewer; both required) → {"user_id",
///   "key","fingerprint","status":"in_flight|completed","response":{"outcome","status",
///   "body"}|null,"locked_at","created_at","completed_at"}; 404 not_found for no record.
/// - POST /api/v1/idempotency-keys/{user_id}/{key}/unlock (operator) {"reason"} deletes a
///   record stuck in_flight for longer than `inFlightTimeoutMs` (the same timeout after
///   which a retry of the same request takes it over), so the client may retry with its
///   key: 200 {"unlocked":true,"record":{...as before}}; 409 conflict when it is completed
///   or not yet past the timeout; 404 not_found. Audited as `idempotency.unlock` (target
///   "idempotency:<user_id>:<key>", before = the record).
void registerIdempotencyRoutes(HttpServer &server, core::IdempotencyStore &store, core::AuditWriter &audit,
                               const core::Clock &clock, qint64 inFlightTimeoutMs);

} // namespace payonce::http
