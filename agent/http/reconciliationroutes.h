#pragma once

#include "httpserver.h"

namespace payonce::core {
class AuditWriter;
class Clock;
class PatrolRunner;
} // namespace payonce::core

namespace payonce::http {

/// POST /api/v1/reconciliation/run (operator) {"reason"} — the reason is required, as for
/// every action (docs/openapi.yaml) — runs the patrol once on the worker that took the request and
/// answers 200 {"ran_at","findings":[findingJson()...]}: the findings of this run. Audited
/// after the run as (actor, "reconciliation.run", "patrol", -, {"findings":N,"ids":[...]},
/// reason). One run at a time per agent: while another run (the timer's or an operator's)
/// is going, 409 patrol_running and nothing is run or written.
void registerReconciliationRoutes(HttpServer &server, core::PatrolRunner &patrol, core::AuditWriter &audit,
                                  const core::Clock &clock);

} // namespace payonce::http
