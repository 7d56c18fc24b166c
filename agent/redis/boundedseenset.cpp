#include "boundedseenset.h"

namespace payonce::redis {

BoundedSeenSet::BoundedSeenSet(int capacity, std::chrono::milliseconds ttl)
    : m_capacity(std::max(1, capacity))
    , m_ttl(ttl)
{
}

void BoundedSeenSet::insert(const QString &item, const QByteArray &value)
{
    std::lock_guard lock(m_mutex);
    const auto expiresAt = Clock::now() + m_ttl;
    if (const auto found = m_index.constFind(item); found != m_index.constEnd()) {
        m_order.erase(found.value());
        m_index.remove(item);
    }
    m_order.push_front(Slot{item, value, expiresAt});
    m_index.insert(item, m_order.begin());
    while (static_cast<int>(m_order.size()) > m_capacity) {
        m_index.remove(m_order.back().item);
        m_order.pop_back();
    }
}

std::optional<QByteArray> BoundedSeenSet::find(const QString &item)
{
    std::lock_guard lock(m_mutex);
    const auto found = m_index.constFind(item);
    if (found == m_index.constEnd())
        return std::nullopt;
    if (found.value()->expiresAt <= Clock::now()) {
        m_order.erase(found.value());
        m_index.remove(item);
        return std::nullopt;
    }
    return found.value()->value;
}

int BoundedSeenSet::size() const
{
    std::lock_guard lock(m_mutex);
    return static_cast<int>(m_order.size());
}

} // namespace payonce::redis
