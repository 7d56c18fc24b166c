#pragma once

#include "httpserver.h"

namespace payonce::core {
class AuditWriter;
class CallbackHistory;
class CallbackPipeline;
} // namespace payonce::core

namespace payonce::http {

/// The callback inspector and replay (docs/openapi.yaml, "Operations"):
///
/// - GET /api/v1/callbacks?pay_no=... | ?order_no=... (viewer; exactly one of the two, else
///   400 invalid_request) → {"deliveries":[{"id","received_at","channel","pay_no",
///   "order_no","verified","layer","http_status","outcome","agent_id"}],"log":[{"channel",
///   "pay_no","order_no","amount_fen","status":"accepted|processed","outcome",
///   "delivery_id","created_at","processed_at"}]}; `limit` bounds the deliveries.
/// - POST /api/v1/callbacks/{channel}/{pay_no}/replay (operator) {"reason"} → the newest
///   verified stored delivery through CallbackPipeline::replay(): 200 {"outcome","layer",
///   "note","message","pay_no","order_no","delivery_id","dry_run":false}, with
///   X-Payonce-Layer; audited as `callback.replay` (target "callback:<channel>:<pay_no>",
///   after = the answer) once it ran. Nothing is appended to callback_deliveries: the
///   audit row is the record of the replay. 404 not_found when no verified delivery is
///   stored. `?dry_run=true` → the same answer as predicted, "dry_run":true and
///   "changes" (the rows it would write); it writes nothing, not even an audit row.
void registerCallbackOpsRoutes(HttpServer &server, core::CallbackHistory &history, core::CallbackPipeline &pipeline,
                               core::AuditWriter &audit);

} // namespace payonce::http
