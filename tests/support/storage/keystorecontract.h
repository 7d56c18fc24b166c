#pragma once

#include "core/ports/keystore.h"

#include <QObject>
#include <QString>

namespace payonce::tests {

/// The key-store contract, one set of test bodies run against every implementation:
/// tst_keystore_embedded, and through RedisKeyStoreContract (rediskeystorecontract.h)
/// tst_keystore_redis, tst_keystore_sentinel and tst_keystore_cluster on the servers of the
/// harness. A subclass provides the stores (its init() makes them fresh for every test
/// function) and adds the tests only its backend can run. Concurrency is proven with 64 real threads
/// and counting; timing is only ever "within N seconds" with generous slack.
class KeyStoreContract : public QObject {
    Q_OBJECT
protected:
    /// The store under test.
    virtual core::KeyStore &store() = 0;
    /// A second store on the same backend — a second agent on the same Redis. The
    /// embedded store is one instance by design: it returns store() again.
    virtual core::KeyStore &secondStore() = 0;

    /// A key no other test function (or earlier run on the same server) uses.
    static QString uniqueKey(const char *prefix);
    /// "unavailable: Redis at …": an error's code name and internal message, for failures.
    static QString describe(const core::Error &error);
    /// Pings `store` every 50 ms until it answers (it must recover by itself) or withinMs pass.
    static bool waitUntilReachable(core::KeyStore &store, int withinMs);

private Q_SLOTS:
    void healthyStoreIsNotDegraded();

    void tokenIsConsumedOnce();
    void tokenExpires();
    void wrongTokenIsNotConsumed();
    void concurrentConsumeHasExactlyOneWinner();

    void lockIsExclusiveAndReleased();
    void releaseIsOwnerChecked();
    void concurrentLockHasAtMostOneHolder();
    void watchdogKeepsLockOfLongHolder();
    void frozenHolderLosesLockAndLateReleaseSparesNewOwner();

    void fencingTokensStrictlyIncrease();
    void fencingTokenIsTakenWithTheLock();

    void idempotencyCacheRoundTrip();
    void idempotencyCacheExpires();
    void seenProcessedSet();

    void scanFindsEveryStoresLocks();
};

} // namespace payonce::tests
