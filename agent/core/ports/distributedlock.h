#pragma once

#include "core/common/result.h"

#include <QString>

#include <chrono>
#include <memory>

namespace payonce::core {

/// A held lease on a lock key. Obtained from DistributedLock::acquire().
///
/// While the handle lives, a watchdog renews the lease every ttl/3 (an owner-checked
/// PEXPIRE). If a renewal is refused (the key expired or belongs to someone else) or no
/// renewal could be confirmed for a whole ttl, the handle is lost(): the holder must stop
/// and roll back before COMMIT — its fencing token may already be superseded.
///
/// release() stops the watchdog and deletes the key only if this handle still owns it; a
/// late release after the lease moved on never deletes the new owner's lock. Call it
/// after COMMIT (docs/design.md rule 1), never inside a transaction. The destructor releases too
/// (best effort) if release() was not called.
///
/// Thread-safety: lost() and release() may be called from any thread, also from another
/// thread than the one that acquired; the handle itself is not meant to be shared by
/// several holders.
class LockHandle {
public:
    virtual ~LockHandle() = default;

    virtual QString key() const = 0;
    /// The random owner value stored under the key (128 bits, hex).
    virtual QString owner() const = 0;
    /// The fencing token taken for the fence scope given to acquire() together with the
    /// lock (epoch * 2^32 + per-scope counter); 0 when no fence scope was given.
    virtual quint64 fencingToken() const = 0;
    /// True once the holder can no longer rely on the lease (see above). Never goes back
    /// to false.
    virtual bool lost() const = 0;
    /// Stops renewals and deletes the key if still ours. true: we deleted our own lock;
    /// false: it was no longer ours (expired, taken over). Idempotent: a second call
    /// returns false without touching the store.
    virtual Result<bool> release() = 0;

    /// Test hook: the watchdog stops renewing this lease (a frozen holder: GC pause,
    /// SIGSTOP) while the handle stays alive. Not for production code.
    virtual void stopRenewingForTest() = 0;
};

/// L3: a distributed lock with leases, watchdog renewal and fencing tokens.
///
/// acquire() tries once (no waiting): SET key owner NX PX ttl. A lock already held by
/// another owner yields an empty pointer (Busy is not an error here: "absent, and that's
/// fine"). When `fenceScope` is not empty (an order_no), the handle carries the next
/// fencing token for that scope, taken in the same atomic step that won the lock (never
/// later: a holder paused in between could outrank its successor), so tokens strictly
/// increase across holders of the same scope — also across key-store restarts and
/// failovers.
///
/// The ttl has a floor: Redis refuses (InvalidInput) a ttl below 3 × its command timeout
/// — one watchdog thread renews every lease of a store, and a single hung renewal holds it
/// for up to a command timeout, so a shorter lease could run out behind it; the embedded
/// store refuses a ttl below 30 ms.
///
/// A key is always taken with the same fence scope (or always without one): on Redis
/// Cluster a fenced lock is stored beside its scope's fence state, under a name that
/// carries the scope's slot, so the same key with another scope is another lock. The
/// pipelines keep to it (lock:order:<order_no> and lock:pay:<pay_no>, each with its order).
///
/// Thread-safe. acquire() is safe to retry after an error: a SET that reached the store
/// before the connection failed leaves an orphan lease that expires after ttl.
class DistributedLock {
public:
    virtual ~DistributedLock() = default;
    virtual Result<std::unique_ptr<LockHandle>> acquire(const QString &key, std::chrono::milliseconds ttl,
                                                        const QString &fenceScope = {}) = 0;
};

/// Fencing tokens per resource (the order): token = epoch * 2^32 + counter, where the epoch
/// comes from the FenceEpochSource and the counter is an atomic increment in the key store
/// (per scope, or one for all scopes). Each call returns a token larger than every token
/// returned before for the same scope, by any agent, across key-store restarts, failovers,
/// failbacks and lost counters (the counter may restart, the epoch then grows). Thread-safe; not idempotent (each call
/// consumes a token), retrying is safe (a skipped token is harmless).
class FencingTokens {
public:
    virtual ~FencingTokens() = default;
    virtual Result<quint64> next(const QString &scope) = 0;
};

} // namespace payonce::core
