#pragma once

#include "httpserver.h"

namespace payonce::core {
class BreakerRegistry;
class Clock;
} // namespace payonce::core

namespace payonce::http {

/// GET /api/v1/breakers (viewer) and POST /api/v1/breakers/<name> (operator, with a
/// reason; the mode is stored in the database so every agent obeys, and audited with the
/// caller as actor). The registry must outlive the server. A mode set is published as an
/// event {"kind":"breaker.mode","subject":<name>,"value":<mode>,"actor","reason"}.
void registerBreakerRoutes(HttpServer &server, core::BreakerRegistry &breakers, const core::Clock &clock,
                           EventPublisher publish = {});

} // namespace payonce::http
