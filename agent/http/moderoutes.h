#pragma once

#include "httpserver.h"

#include "core/ports/callbackmodestore.h"

#include <functional>

namespace payonce::core {
class AuditWriter;
class Clock;
} // namespace payonce::core

namespace payonce::http {

/// The incident switch (docs/openapi.yaml): GET /api/v1/mode (viewer) → {"callbacks":"normal"|
/// "accept_only","accepted_waiting",...}; PUT /api/v1/mode (operator) {"callbacks",
/// "reason"} — stored in the database, so every agent follows it, and audited with the
/// caller as actor. A change is published as an event {"kind":"callback.mode",
/// "subject":"callbacks","value":<mode>,"actor","reason"}. The setting and its audit row
/// commit in one transaction. `applied` is told every mode this agent set once it is
/// committed: the callback pipeline takes it from the next delivery on; other agents
/// within their mode cache (1 s).
void registerModeRoutes(HttpServer &server, core::CallbackModeStore &modes, core::AuditWriter &audit,
                        const core::Clock &clock, EventPublisher publish = {},
                        std::function<void(core::CallbackMode)> applied = {});

} // namespace payonce::http
