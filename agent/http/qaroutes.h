#pragma once

#include "httpserver.h"

namespace payonce::core {
class QaRunStore;
class ScenarioRunner;
} // namespace payonce::core

namespace payonce::http {

/// QA scenarios (docs/openapi.yaml, "QA scenarios"), registered only when qa.enabled — without it the
/// paths do not exist (404 not_found, like any unknown path), so no production agent
/// offers them:
///   POST /api/v1/qa/scenarios (operator) {"kind","orders","duplicates","concurrency",
///        "time_scale","targets","disable_layers", optional "reason"} → 202
///        {"scenario_id"}; a bad field 400 invalid_request naming it, nothing written; a
///        run already going in this agent 409 scenario_running. The run is audited
///        (qa.scenario.start) with the token's name and the reason (default "QA scenario
///        <kind>"); the set-up calls to the targets carry the agent's own QA token
///        (qa.token), never the caller's.
///        Absent targets: this agent (selfBaseUrl). A target that is neither this agent
///        nor one of `peers` (qa.peers) is 400 qa_target_not_allowed, nothing written.
///   GET  /api/v1/qa/scenarios?limit= (viewer) → newest first, without reports.
///   GET  /api/v1/qa/scenarios/{id} (viewer) → the run: params, status running | passed |
///        failed | error | abandoned, progress, the agent that runs it and its lease and,
///        once finished, the invariant report; 404 scenario_not_found. An abandoned run's
///        agent stopped renewing its lease (it died): finished_at is when the lease ended.
void registerQaRoutes(HttpServer &server, core::ScenarioRunner &runner, core::QaRunStore &store,
                      const QString &selfBaseUrl, const QStringList &peers);

} // namespace payonce::http
