#pragma once

#include "core/ports/fenceepochsource.h"
#include "core/ports/keystore.h"
#include "redis/redisoptions.h"

#include <functional>
#include <memory>

namespace payonce::redis {

/// The key store on a Redis server, through hiredis.
///
/// - One hiredis context per calling thread (contexts are not thread-safe), opened on the
///   thread's first call, reopened after a failure; the lock watchdog has its own.
/// - Connect and command timeouts from RedisOptions: a call on a dead or hung server fails
///   with Unavailable within commandTimeout on an open connection, connectTimeout +
///   commandTimeout when it must open one (RedisOptions has the exact bounds), never hangs. After a failed
///   connect, calls fail fast for a growing backoff (no sleeping in the caller), then the
///   next call tries again: the store recovers by itself.
/// - A wrong or missing password is Misconfigured, with the server's answer in the message.
/// - Lua scripts (compare-and-delete, owner-checked renew, lock + fencing token, next
///   token, L1 put) are loaded with SCRIPT LOAD when a connection meets a Redis instance
///   for the first time and run with EVALSHA; NOSCRIPT (a flushed script cache) reloads
///   and retries.
/// - Fencing: a token is the epoch and the counter of the instance's fence:state hash,
///   read and incremented in one script. On every (re)connect, before the connection runs
///   any command, the handshake installs a new epoch from the FenceEpochSource unless the
///   state has an epoch installed by this very run_id and no larger epoch was handed out
///   since (no database: the connect fails as Unavailable); a script that finds no state,
///   a full counter or state below a token this store already has installs a new epoch
///   and runs again. So tokens never go backwards across restarts, failovers, failbacks
///   and lost keys (README: "Fencing tokens never go backwards").
/// - Evicting Redis policies also evict locks and tokens: the first handshake with an
///   instance warns in the log unless `maxmemory-policy` is noeviction (a refused CONFIG
///   GET skips the check).
///
/// Construction never contacts Redis (the agent starts with Redis down, degraded). The
/// FenceEpochSource must outlive the store. Keys used: token:{scope}, fence:state,
/// idem:{scope}:{key}, seen:{channel}:{pay_no}, and the lock keys as given.
class RedisKeyStore final : public core::KeyStore {
public:
    RedisKeyStore(const RedisOptions &options, core::FenceEpochSource &epochs);
    ~RedisKeyStore() override;

    core::TokenStore &tokens() override;
    core::DistributedLock &locks() override;
    core::FencingTokens &fencing() override;
    core::IdempotencyCache &idempotency() override;
    core::SeenProcessedSet &seenProcessed() override;
    const core::LockObserver &lockObserver() const override;
    void setLockLostSink(core::EventSink sink) override;

    bool degraded() const override;
    core::Result<void> ping() override;
    QString instanceId() const override;
    QString backendName() const override { return QStringLiteral("redis"); }
    core::KeyStoreTopology topology() const override;
    core::StoredLockScan scanLocks(int limit) override;

    const RedisOptions &options() const;

    /// Test hook: called on the acquiring thread once acquire() has won a lock (and taken
    /// its fencing token), before it returns — where a holder paused by a GC or SIGSTOP
    /// would stop. Empty: none. Set it while no acquire() runs. Not for production code.
    void setLockWonHookForTest(std::function<void()> hook);

    class Private;

private:
    std::unique_ptr<Private> d;
};

} // namespace payonce::redis
