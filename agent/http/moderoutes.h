#pragma once

#include "httpserver.h"

namespace payonce::core {
class AuditWriter;
class CallbackModeStore;
class Clock;
} // namespace payonce::core

namespace payonce::http {

/// The incident switch (docs/openapi.yaml): GET /api/v1/mode (viewer) → {"callbacks":"normal"|
/// "accept_only","accepted_waiting",...}; PUT /api/v1/mode (operator) {"callbacks",
/// "reason"} — stored in the database, so every agent follows it, and audited with the
/// caller as actor. A change is published as an event {"kind":"callback.mode",
/// "subject":"callbacks","value":<mode>,"actor","reason"}.
void registerModeRoutes(HttpServer &server, core::CallbackModeStore &modes, core::AuditWriter &audit,
                        const core::Clock &clock, EventPublisher publish = {});

} // namespace payonce::http
