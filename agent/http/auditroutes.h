#pragma once

#include "httpserver.h"

namespace payonce::core {
class AuditReader;
}

namespace payonce::http {

/// GET /api/v1/audit?since=<ISO-8601>&actor=&action=&target=&limit=N (viewer; filters
/// match exactly, since is inclusive and taken as UTC without an offset, limit 1-1000,
/// default 100) → [{"id","at","actor","action","target","before","after","reason",
/// "trace_id"}], newest first; before/after as the JSON they were stored as. A bad value:
/// 400 invalid_request.
void registerAuditRoutes(HttpServer &server, core::AuditReader &audit);

} // namespace payonce::http
