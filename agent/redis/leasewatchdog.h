#pragma once

#include "core/ports/distributedlock.h"
#include "core/ports/eventsink.h"
#include "lockregistry.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace payonce::redis {

/// One lease kept alive by a LeaseWatchdog. Shared between the handle (the holder) and
/// the watchdog thread; every field the holder reads is atomic.
struct Lease {
    using Clock = std::chrono::steady_clock;
    /// Owner-checked extension by ttl: true = extended, false = no longer ours. Runs on
    /// the watchdog thread (so a Redis adapter uses that thread's own connection).
    using RenewFunction = std::function<core::Result<bool>()>;

    Lease(std::chrono::milliseconds leaseTtl, RenewFunction renewFunction, Clock::time_point acquiredAt);

    /// Lost for good, or the last confirmed lease ran out (the watchdog may be starved or
    /// the store unreachable: the holder cannot rely on the lock any more either way).
    /// Latches: once true, always true — a renewal confirmed after the deadline does not
    /// revive the lease (the holder may already have rolled back on it).
    bool lost() const;
    void markLost() const { m_lost.store(true); }

    const std::chrono::milliseconds ttl;
    const RenewFunction renew;
    std::atomic<bool> frozen{false};        ///< test hook: renewals stopped
    std::atomic<Clock::rep> confirmedUntil; ///< steady-clock ticks; the lease is ours until then
    std::atomic<qint64> renewals{0};        ///< renewals confirmed (the lock registry shows them)
    std::atomic<bool> released{false};      ///< released by its holder (not lost)

private:
    mutable std::atomic<bool> m_lost{false}; ///< latched by lost() once the deadline passed
    friend class LeaseWatchdog;
    Clock::time_point m_nextRenewal; ///< watchdog thread only (under its mutex)
};

/// Renews leases every ttl/3 on one background thread per key store. A renewal answered
/// "not ours" marks the lease lost at once; a renewal that fails (store unreachable) is
/// retried sooner, and the lease is lost when no renewal was confirmed for a whole ttl.
/// A lost lease is never renewed again, also when a renewal in flight at its deadline
/// comes back "extended".
/// The thread starts with the first lease and stops (joined) when the watchdog dies.
class LeaseWatchdog {
public:
    LeaseWatchdog() = default;
    ~LeaseWatchdog();
    LeaseWatchdog(const LeaseWatchdog &) = delete;
    LeaseWatchdog &operator=(const LeaseWatchdog &) = delete;

    void add(const std::shared_ptr<Lease> &lease);
    void remove(const std::shared_ptr<Lease> &lease);
    /// Every lease this watchdog's store handed out (GET /api/v1/locks).
    LockRegistry &registry() { return m_registry; }
    /// lock.lost for each lease found lost here (renewal refused, or ran out unrenewed),
    /// called on the watchdog thread; see core::KeyStore::setLockLostSink.
    void setLostSink(core::EventSink sink);

private:
    void run();
    void reportLost(const Lease &lease, const QString &why);

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::vector<std::shared_ptr<Lease>> m_leases;
    bool m_stopping = false;
    std::thread m_thread;
    LockRegistry m_registry;
    std::mutex m_sinkMutex;
    core::EventSink m_lostSink;
};

/// The LockHandle both key stores hand out: the lease under the watchdog, and a release
/// function (owner-checked delete) supplied by the store.
class LeaseHandle final : public core::LockHandle {
public:
    using ReleaseFunction = std::function<core::Result<bool>()>;

    /// Recorded in the watchdog's registry; fenceScope is the scope fencingToken fences.
    LeaseHandle(QString key, QString owner, quint64 fencingToken, const QString &fenceScope,
                std::shared_ptr<LeaseWatchdog> watchdog, std::shared_ptr<Lease> lease, ReleaseFunction release);
    ~LeaseHandle() override;

    QString key() const override { return m_key; }
    QString owner() const override { return m_owner; }
    quint64 fencingToken() const override { return m_fencingToken; }
    bool lost() const override { return m_lease->lost(); }
    core::Result<bool> release() override;
    void stopRenewingForTest() override { m_lease->frozen.store(true); }

private:
    const QString m_key;
    const QString m_owner;
    const quint64 m_fencingToken;
    std::shared_ptr<LeaseWatchdog> m_watchdog;
    std::shared_ptr<Lease> m_lease;
    ReleaseFunction m_release;
    std::once_flag m_released;
};

} // namespace payonce::redis
