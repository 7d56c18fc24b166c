#pragma once

#include "core/ports/fenceepochsource.h"
#include "core/ports/keystore.h"

#include <chrono>
#include <memory>

namespace payonce::redis {

/// The key store in process, for single-instance mode (--redis=embedded): the same
/// contract as RedisKeyStore — TTL expiry, compare-and-delete, leases with the same
/// watchdog, fencing — held in this process's memory behind one mutex.
///
/// Fencing: the store draws a random instance id when it starts and asks the
/// FenceEpochSource for a new epoch, so tokens keep growing across agent restarts although
/// the counters start again at 1. It is never degraded (nothing to reach). It must not be
/// used by several agents at once: each would have its own locks (openKeyStore() refuses
/// that configuration). Thread-safe.
class EmbeddedKeyStore final : public core::KeyStore {
public:
    struct Options {
        std::chrono::milliseconds seenProcessedTtl{std::chrono::hours(48)};
        int seenProcessedCapacity = 100000;
    };

    /// Fails when the epoch source fails (the database is down at start).
    static core::Result<std::unique_ptr<EmbeddedKeyStore>> create(core::FenceEpochSource &epochs,
                                                                  const Options &options);
    static core::Result<std::unique_ptr<EmbeddedKeyStore>> create(core::FenceEpochSource &epochs)
    {
        return create(epochs, Options{});
    }
    ~EmbeddedKeyStore() override;

    core::TokenStore &tokens() override;
    core::DistributedLock &locks() override;
    core::FencingTokens &fencing() override;
    core::IdempotencyCache &idempotency() override;
    core::SeenProcessedSet &seenProcessed() override;
    const core::LockObserver &lockObserver() const override;
    void setLockLostSink(core::EventSink sink) override;

    bool degraded() const override { return false; }
    core::Result<void> ping() override { return {}; }
    QString instanceId() const override;
    QString backendName() const override { return QStringLiteral("embedded"); }
    core::KeyStoreTopology topology() const override;
    core::StoredLockScan scanLocks(int limit) override;

    class Private;

private:
    explicit EmbeddedKeyStore(std::unique_ptr<Private> d);
    std::unique_ptr<Private> d;
};

} // namespace payonce::redis
