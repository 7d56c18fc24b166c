#pragma once

#include "httpserver.h"

#include <functional>

namespace payonce::core {
class LockObserver;
} // namespace payonce::core

namespace payonce::http {

/// GET /api/v1/locks (viewer; docs/openapi.yaml, "Operations") → what this agent's key store
/// knows of its own locks: {"locks":[{"key","owner","state":"held|lost","fencing_token",
/// "fence_scope","acquired_at","ttl_left_ms","renewals"}],"fencing_tokens":[{"order_no",
/// "token"}],"stale_fence_refused":N}. Tokens are decimal strings (they exceed 2^53).
/// staleFenceRefused counts the writes the database refused for a stale token.
void registerLockRoutes(HttpServer &server, const core::LockObserver &locks,
                        std::function<qint64()> staleFenceRefused);

} // namespace payonce::http
