#include "lockregistry.h"

#include "leasewatchdog.h"

#include <QDateTime>

#include <algorithm>

namespace payonce::redis {

namespace {

bool lostNotReleased(const Lease &lease)
{
    return lease.lost() && !lease.released.load();
}

} // namespace

void LockRegistry::record(const QString &key, const QString &owner, quint64 fencingToken, const QString &fenceScope,
                          const std::shared_ptr<const Lease> &lease)
{
    core::LockView view;
    view.key = key;
    view.owner = owner;
    view.fencingToken = fencingToken;
    view.fenceScope = fenceScope;
    view.acquiredAtMs = QDateTime::currentMSecsSinceEpoch();
    std::lock_guard guard(m_mutex);
    pruneLocked();
    m_entries.push_back(Entry{view, lease});
    if (!fenceScope.isEmpty()) {
        std::erase_if(m_fences, [&](const core::FenceView &f) { return f.scope == fenceScope; });
        m_fences.push_back(core::FenceView{fenceScope, fencingToken});
        if (m_fences.size() > kMaxScopes)
            m_fences.pop_front();
    }
}

void LockRegistry::pruneLocked() const
{
    std::erase_if(m_entries, [](const Entry &e) { return e.lease->released.load(); });
    std::size_t lost = std::count_if(m_entries.begin(), m_entries.end(),
                                     [](const Entry &e) { return lostNotReleased(*e.lease); });
    for (auto it = m_entries.begin(); lost > kMaxLost && it != m_entries.end();) {
        if (lostNotReleased(*it->lease)) {
            it = m_entries.erase(it);
            --lost;
        } else {
            ++it;
        }
    }
}

QList<core::LockView> LockRegistry::locks() const
{
    std::lock_guard guard(m_mutex);
    pruneLocked();
    QList<core::LockView> held;
    QList<core::LockView> lost;
    const auto now = Lease::Clock::now().time_since_epoch().count();
    for (auto it = m_entries.rbegin(); it != m_entries.rend(); ++it) {
        core::LockView view = it->view;
        view.renewals = it->lease->renewals.load();
        if (it->lease->lost()) {
            view.state = core::LockView::State::Lost;
            lost.append(view);
        } else {
            const auto left = Lease::Clock::duration(it->lease->confirmedUntil.load() - now);
            view.ttlLeftMs = std::max<qint64>(0, std::chrono::duration_cast<std::chrono::milliseconds>(left).count());
            held.append(view);
        }
    }
    return held + lost;
}

std::optional<core::LockView> LockRegistry::viewOf(const Lease &lease) const
{
    std::lock_guard guard(m_mutex);
    for (const Entry &entry : m_entries) {
        if (entry.lease.get() != &lease)
            continue;
        core::LockView view = entry.view;
        view.renewals = lease.renewals.load();
        if (lease.lost())
            view.state = core::LockView::State::Lost;
        return view;
    }
    return std::nullopt;
}

QList<core::FenceView> LockRegistry::lastFencingTokens() const
{
    std::lock_guard guard(m_mutex);
    return QList<core::FenceView>(m_fences.rbegin(), m_fences.rend());
}

} // namespace payonce::redis
