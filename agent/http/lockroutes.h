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
///
/// GET /api/v1/locks/keys?limit=N (viewer; default 200, at most 1000) → the key inspector:
/// every lock key in the store itself, any agent's, on every master (a cluster's too):
/// {"locks":[{"key","stored_key","node","owner","ttl_left_ms","held_by_this_agent","stuck",
/// "stuck_reason"}],"stuck":N,"nodes":[…],"failures":[…],"truncated":bool,"lock_ttl_ms"}.
/// A lock is stuck when it has no expiry or more time left than the longest lock ttl the
/// agent uses (`longestLockTtlMs`): it will not go away by itself in time.
void registerLockRoutes(HttpServer &server, core::KeyStore &keyStore, qint64 longestLockTtlMs,
                        std::function<qint64()> staleFenceRefused);

} // namespace payonce::http
