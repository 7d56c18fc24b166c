#pragma once

#include <QByteArray>
#include <QHash>
#include <QString>

#include <chrono>
#include <list>
#include <mutex>
#include <optional>

namespace payonce::redis {

/// A bounded, expiring set of strings, each with a value: at most `capacity` entries (the
/// least recently marked go first), each forgotten after `ttl`. The in-process front of the
/// seen-processed set (the value: what the payment was), and all of it in the embedded
/// store. Thread-safe.
class BoundedSeenSet {
public:
    using Clock = std::chrono::steady_clock;

    BoundedSeenSet(int capacity, std::chrono::milliseconds ttl);

    void insert(const QString &item, const QByteArray &value = {});
    /// The item's value; nullopt when absent or expired.
    std::optional<QByteArray> find(const QString &item);
    bool contains(const QString &item) { return find(item).has_value(); }
    int size() const;

private:
    struct Slot {
        QString item;
        QByteArray value;
        Clock::time_point expiresAt;
    };

    const int m_capacity;
    const std::chrono::milliseconds m_ttl;
    mutable std::mutex m_mutex;
    std::list<Slot> m_order; // most recently marked first
    QHash<QString, std::list<Slot>::iterator> m_index;
};

} // namespace payonce::redis
