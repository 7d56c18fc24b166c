#pragma once

#include "core/ports/distributedlock.h"
#include "core/ports/eventsink.h"
#include "core/ports/idempotencycache.h"
#include "core/ports/lockobserver.h"
#include "core/ports/tokenstore.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace payonce::core {

/// How the key store reaches its data, for /metrics, the lock monitor and the console:
/// enough for the war room to see a failover happen.
struct KeyStoreTopology {
    QString mode; ///< "embedded", "single" (one Redis address), "sentinel" or "cluster"
    /// "host:port" written to now; a cluster's masters as "host:port,host:port…"; empty when
    /// none is known (embedded: empty)
    QString master;
    /// The fencing epoch in force on it (0 before the first contact); a cluster keeps one per
    /// slot: the largest this agent met
    quint64 fenceEpoch = 0;
    quint64 masterSwitches = 0; ///< master changes seen since start (failovers)
};

/// A lock as the store itself holds it — any agent's, not only this one's: the key
/// inspector's row.
struct StoredLock {
    QString key;           ///< as the pipelines name it (lock:pay:<pay_no>), a cluster's hash tag taken off
    QString storedKey;     ///< the key as stored
    QString node;          ///< "host:port" of the master holding it; empty for the embedded store
    QString owner;         ///< the holder's random owner value
    qint64 ttlLeftMs = -1; ///< -1: the key has no expiry (it never goes away by itself)
};

/// What a scan of every master found. A node that could not be scanned is named in
/// `failures` and the others are still reported.
struct StoredLockScan {
    std::vector<StoredLock> locks;
    QStringList nodes;      ///< the nodes scanned ("embedded" for the embedded store)
    QStringList failures;   ///< "host:port: why", one per node that could not be scanned
    bool truncated = false; ///< more lock keys than the limit asked for
};

/// The key store as the pipelines see it: tokens (L2), locks and fencing (L3), the L1
/// cache and the seen-processed set, all backed by one store — Redis, or the embedded
/// in-process store for single-instance mode.
///
/// Redis is an accelerator (docs/design.md rule 5): when the store is unreachable every call fails
/// fast (within the configured timeout) with ErrorCode::Unavailable and degraded() is
/// true; the store recovers by itself when the server is back. Readiness must not depend
/// on it. Thread-safe; the parts live as long as the KeyStore.
class KeyStore {
public:
    virtual ~KeyStore() = default;

    virtual TokenStore &tokens() = 0;
    virtual DistributedLock &locks() = 0;
    virtual FencingTokens &fencing() = 0;
    virtual IdempotencyCache &idempotency() = 0;
    virtual SeenProcessedSet &seenProcessed() = 0;
    /// The locks this store handed out and their leases, as this process saw them.
    virtual const LockObserver &lockObserver() const = 0;
    /// Receives lock.lost for every lease this store's watchdog finds lost (its renewal
    /// refused: the key is no longer ours; or the lease ran out unrenewed), on the
    /// watchdog's thread. Not for leases released by their holder. Replaces the previous sink.
    virtual void setLockLostSink(EventSink sink) = 0;

    /// True while the last contact with the store failed (unreachable, timed out, refused
    /// our credentials, or answered with a refusal that means Unavailable: loading,
    /// read-only, out of memory). Cleared only by a successful reply. Cheap; read by the
    /// pipelines and /readyz.
    virtual bool degraded() const = 0;
    /// Contacts the store now (PING) and updates degraded().
    virtual Result<void> ping() = 0;
    /// The identity of the store instance the fencing epoch belongs to: the Redis run_id
    /// last seen, or the embedded store's random start id. Empty before first contact.
    virtual QString instanceId() const = 0;
    /// "redis" or "embedded", for logs and metrics.
    virtual QString backendName() const = 0;
    virtual KeyStoreTopology topology() const = 0;
    /// Every lock key in the store (`lock:*`), on every master (SCAN each; a cluster's
    /// masters one after the other), at most `limit`: the operator's key inspector. Slow on
    /// a large store: never on a payment's path.
    virtual StoredLockScan scanLocks(int limit) = 0;
};

} // namespace payonce::core
