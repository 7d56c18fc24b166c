#pragma once

#include "httpserver.h"

#include <functional>

#include "core/ports/keystore.h"

namespace payonce::http {

/// GET /api/v1/locks (viewer; docs/openapi.yaml, "Operations") → what this agent's key store
/// knows of its own locks: {"locks":[{"key","owner","state":"held|lost","fencing_token",
/// "fence_scope","acquired_at","ttl_left_ms","renewals"}],"fencing_tokens":[{"order_no",
/// "token"}],"stale_fence_refused":N,"key_store":{"mode","master","fence_epoch",
/// "master_switches","degraded"}}. Tokens are decimal strings (they exceed 2^53).
/// staleFenceRefused counts the writes the database refused for a stale token; key_store is
/// the store's topology (core::KeyStoreTopology), so the desk sees a failover happen.
void registerLockRoutes(HttpServer &server, const core::KeyStore &keyStore, std::function<qint64()> staleFenceRefused);

} // namespace payonce::http
