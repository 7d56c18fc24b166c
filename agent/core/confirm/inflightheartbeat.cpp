#include "core/confirm/inflightheartbeat.h"

#include "core/ports/clock.h"
#include "core/ports/idempotencystore.h"

#include "logging/categories.h"

#include <vector>

namespace payonce::core {

InFlightHeartbeat::InFlightHeartbeat(IdempotencyStore &store, const Clock &clock, std::chrono::milliseconds interval)
    : m_store(store), m_clock(clock), m_interval(interval), m_thread([this] { run(); })
{
}

InFlightHeartbeat::~InFlightHeartbeat()
{
    {
        std::lock_guard guard(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

InFlightHeartbeat::Registration InFlightHeartbeat::beatFor(qint64 userId, const QString &key, const QString &owner)
{
    std::lock_guard guard(m_mutex);
    const quint64 id = m_nextId++;
    m_entries.emplace(id, Entry{userId, key, owner});
    return Registration(this, id);
}

InFlightHeartbeat::Registration::Registration(Registration &&other) noexcept
    : m_heartbeat(other.m_heartbeat), m_id(other.m_id)
{
    other.m_heartbeat = nullptr;
}

InFlightHeartbeat::Registration::~Registration()
{
    if (!m_heartbeat)
        return;
    std::lock_guard guard(m_heartbeat->m_mutex);
    m_heartbeat->m_entries.erase(m_id);
}

bool InFlightHeartbeat::Registration::lost() const
{
    if (!m_heartbeat)
        return false;
    std::lock_guard guard(m_heartbeat->m_mutex);
    const auto found = m_heartbeat->m_entries.find(m_id);
    return found != m_heartbeat->m_entries.end() && found->second.lost;
}

void InFlightHeartbeat::run()
{
    std::unique_lock guard(m_mutex);
    while (!m_stopping) {
        m_wake.wait_for(guard, m_interval, [&] { return m_stopping; });
        if (m_stopping)
            break;
        guard.unlock();
        beatOnce();
        guard.lock();
    }
}

void InFlightHeartbeat::beatOnce()
{
    std::vector<std::pair<quint64, Entry>> due;
    {
        std::lock_guard guard(m_mutex);
        for (const auto &[id, entry] : m_entries) {
            if (!entry.lost)
                due.emplace_back(id, entry);
        }
    }
    // The store calls run outside the mutex: a slow database delays the beats, never the
    // requests that register or finish meanwhile.
    for (const auto &[id, entry] : due) {
        auto beaten = m_store.heartbeat(entry.userId, entry.key, entry.owner, m_clock.nowMs());
        if (!beaten.ok()) {
            qCWarning(payonce::lcCore) << "idempotency heartbeat for user" << entry.userId << "key" << entry.key
                                       << "failed (tried again at the next beat):" << beaten.error().internalMessage;
            continue;
        }
        if (beaten.value())
            continue;
        qCWarning(payonce::lcCore) << "idempotency record of user" << entry.userId << "key" << entry.key
                                   << "is no longer this request's (taken over or unlocked)";
        std::lock_guard guard(m_mutex);
        if (const auto found = m_entries.find(id); found != m_entries.end())
            found->second.lost = true;
    }
}

} // namespace payonce::core
