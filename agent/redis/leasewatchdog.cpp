#include "leasewatchdog.h"

#include <QJsonObject>
#include <QLoggingCategory>

#include <algorithm>

namespace payonce::redis {

Q_LOGGING_CATEGORY(lcWatchdog, "payonce.agent.keystore.watchdog")

using Clock = Lease::Clock;

Lease::Lease(std::chrono::milliseconds leaseTtl, RenewFunction renewFunction, Clock::time_point acquiredAt)
    : ttl(leaseTtl), renew(std::move(renewFunction)),
      confirmedUntil((acquiredAt + leaseTtl).time_since_epoch().count()), m_nextRenewal(acquiredAt + leaseTtl / 3)
{
}

bool Lease::lost() const
{
    if (m_lost.load())
        return true;
    if (Clock::now().time_since_epoch().count() < confirmedUntil.load())
        return false;
    markLost(); // the deadline passed: for good (distributedlock.h)
    return true;
}

LeaseWatchdog::~LeaseWatchdog()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void LeaseWatchdog::add(const std::shared_ptr<Lease> &lease)
{
    {
        std::lock_guard lock(m_mutex);
        m_leases.push_back(lease);
        if (!m_thread.joinable())
            m_thread = std::thread([this] { run(); });
    }
    m_wake.notify_all();
}

void LeaseWatchdog::remove(const std::shared_ptr<Lease> &lease)
{
    std::lock_guard lock(m_mutex);
    m_leases.erase(std::remove(m_leases.begin(), m_leases.end(), lease), m_leases.end());
}

void LeaseWatchdog::run()
{
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        auto next = Clock::time_point::max();
        for (const auto &lease : m_leases)
            next = std::min(next, lease->m_nextRenewal);
        if (next == Clock::time_point::max())
            m_wake.wait(lock);
        else
            m_wake.wait_until(lock, next);
        if (m_stopping)
            break;

        const auto now = Clock::now();
        std::vector<std::shared_ptr<Lease>> due;
        for (const auto &lease : m_leases) {
            if (lease->m_nextRenewal <= now)
                due.push_back(lease);
        }
        lock.unlock();

        for (const auto &lease : due) {
            if (lease->frozen.load() || lease->m_lost.load())
                continue;        // a frozen holder's lease simply runs out
            if (lease->lost()) { // ran out before we got to it (store unreachable, thread starved)
                qCWarning(lcWatchdog) << "lease ran out before it could be renewed";
                reportLost(*lease, QStringLiteral("the lease ran out before it could be renewed"));
                continue;
            }
            const auto sentAt = Clock::now();
            const auto renewed = lease->renew();
            Clock::time_point nextRenewal;
            if (renewed.ok() && renewed.value()) {
                if (lease->lost()) {
                    // Confirmed too late: the holder may have seen lost() meanwhile.
                    qCWarning(lcWatchdog) << "lease renewal confirmed after the lease had run out: lost";
                    reportLost(*lease, QStringLiteral("the renewal was confirmed after the lease had run out"));
                    nextRenewal = Clock::time_point::max();
                } else {
                    lease->confirmedUntil.store((sentAt + lease->ttl).time_since_epoch().count());
                    lease->renewals.fetch_add(1);
                    nextRenewal = Clock::now() + lease->ttl / 3;
                }
            } else if (renewed.ok()) {
                const bool releasedMeanwhile = lease->m_lost.load(); // by its holder, while we renewed
                if (!releasedMeanwhile)
                    qCWarning(lcWatchdog) << "lease renewal refused: the lock is no longer ours";
                lease->markLost();
                if (!releasedMeanwhile)
                    reportLost(*lease, QStringLiteral("the renewal was refused: the lock is no longer ours"));
                nextRenewal = Clock::time_point::max();
            } else {
                qCWarning(lcWatchdog).noquote() << "lease renewal failed:" << renewed.error().internalMessage;
                // Try again soon; lost() turns true by itself once confirmedUntil passes.
                nextRenewal = Clock::now() + std::max(lease->ttl / 10, std::chrono::milliseconds(10));
            }
            lock.lock();
            lease->m_nextRenewal = nextRenewal;
            lock.unlock();
        }

        lock.lock();
        // Forget leases that can never be renewed again (frozen ones stay until released,
        // they cost nothing but a skipped slot).
        for (const auto &lease : m_leases) {
            if (lease->frozen.load() && lease->m_nextRenewal <= Clock::now())
                lease->m_nextRenewal = Clock::now() + lease->ttl / 3;
        }
        m_leases.erase(
            std::remove_if(m_leases.begin(), m_leases.end(), [](const auto &lease) { return lease->m_lost.load(); }),
            m_leases.end());
    }
}

void LeaseWatchdog::setLostSink(core::EventSink sink)
{
    std::lock_guard guard(m_sinkMutex);
    m_lostSink = std::move(sink);
}

void LeaseWatchdog::reportLost(const Lease &lease, const QString &why)
{
    core::EventSink sink;
    {
        std::lock_guard guard(m_sinkMutex);
        sink = m_lostSink;
    }
    if (!sink || lease.released.load())
        return;
    const std::optional<core::LockView> view = m_registry.viewOf(lease);
    if (!view)
        return;
    sink({streamevent::LockLost, view->key, QStringLiteral("lost"), view->owner, why,
          QJsonObject{{QStringLiteral("fencing_token"), qint64(view->fencingToken)},
                      {QStringLiteral("fence_scope"), view->fenceScope},
                      {QStringLiteral("renewals"), view->renewals}}});
}

LeaseHandle::LeaseHandle(QString key, QString owner, quint64 fencingToken, const QString &fenceScope,
                         std::shared_ptr<LeaseWatchdog> watchdog, std::shared_ptr<Lease> lease, ReleaseFunction release)
    : m_key(std::move(key)), m_owner(std::move(owner)), m_fencingToken(fencingToken), m_watchdog(std::move(watchdog)),
      m_lease(std::move(lease)), m_release(std::move(release))
{
    m_watchdog->registry().record(m_key, m_owner, m_fencingToken, fenceScope, m_lease);
}

LeaseHandle::~LeaseHandle()
{
    const auto released = release();
    if (!released.ok())
        qCWarning(lcWatchdog).noquote() << "releasing" << m_key
                                        << "on destruction failed:" << released.error().internalMessage
                                        << "(the lease expires by itself)";
}

core::Result<bool> LeaseHandle::release()
{
    bool first = false;
    std::call_once(m_released, [&] { first = true; });
    if (!first)
        return false;
    m_watchdog->remove(m_lease);
    m_lease->released.store(true);
    m_lease->markLost();
    return m_release();
}

} // namespace payonce::redis
