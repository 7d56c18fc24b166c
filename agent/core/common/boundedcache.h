#pragma once

#include <QHash>

#include <chrono>
#include <list>
#include <mutex>
#include <optional>

namespace payonce::core {

/// A bounded, expiring map: at most `capacity` entries (when full, the one inserted longest
/// ago goes first), each forgotten `ttl` after it was inserted. What the key store's
/// seen-processed front keeps (redis::BoundedSeenSet) and the notifications verified lately
/// (callbacks::VerifiedCopies). Thread-safe; Key must be usable in a QHash.
template <typename Key, typename Value>
class BoundedCache {
public:
    using Clock = std::chrono::steady_clock;

    BoundedCache(int capacity, std::chrono::milliseconds ttl) : m_capacity(capacity < 1 ? 1 : capacity), m_ttl(ttl) {}

    void insert(const Key &key, const Value &value)
    {
        std::lock_guard lock(m_mutex);
        if (const auto found = m_index.constFind(key); found != m_index.constEnd()) {
            m_order.erase(found.value());
            m_index.remove(key);
        }
        m_order.push_front(Slot{key, value, Clock::now() + m_ttl});
        m_index.insert(key, m_order.begin());
        while (static_cast<int>(m_order.size()) > m_capacity) {
            m_index.remove(m_order.back().key);
            m_order.pop_back();
        }
    }

    /// The key's value; nullopt when absent or expired.
    std::optional<Value> find(const Key &key)
    {
        std::lock_guard lock(m_mutex);
        const auto found = m_index.constFind(key);
        if (found == m_index.constEnd())
            return std::nullopt;
        if (found.value()->expiresAt <= Clock::now()) {
            m_order.erase(found.value());
            m_index.remove(key);
            return std::nullopt;
        }
        return found.value()->value;
    }

    int size() const
    {
        std::lock_guard lock(m_mutex);
        return static_cast<int>(m_order.size());
    }

private:
    struct Slot {
        Key key;
        Value value;
        Clock::time_point expiresAt;
    };

    const int m_capacity;
    const std::chrono::milliseconds m_ttl;
    mutable std::mutex m_mutex;
    std::list<Slot> m_order; // most recently inserted first
    QHash<Key, typename std::list<Slot>::iterator> m_index;
};

} // namespace payonce::core
