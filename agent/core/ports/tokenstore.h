#pragma once

#include "core/common/result.h"

#include <QString>

#include <chrono>

namespace payonce::core {

/// L2: one-time tokens, one per payment attempt.
///
/// issue() stores a fresh token (128 random bits, hex) under `scope` for `ttl` and
/// returns it. consume() deletes the token if and only if it is the one stored under
/// `scope` — an atomic compare-and-delete — and says whether this call was the one that
/// consumed it: of any number of concurrent consume() calls with the right token, exactly
/// one returns true. A token that expired, was never issued or was already consumed
/// yields false (not an error).
///
/// Thread-safe: call from any thread. issue() is not idempotent (each call makes a new
/// token, replacing the previous one for the scope); retrying it after an error is safe.
/// consume() is NOT safe to retry blindly after an Unavailable error: the first attempt
/// may have consumed the token before the connection failed, so a retry answers false.
/// Treat Unavailable as "L2 could not decide" (the durable layers still hold).
class TokenStore {
public:
    virtual ~TokenStore() = default;
    virtual Result<QString> issue(const QString &scope, std::chrono::milliseconds ttl) = 0;
    virtual Result<bool> consume(const QString &scope, const QString &token) = 0;
};

} // namespace payonce::core
