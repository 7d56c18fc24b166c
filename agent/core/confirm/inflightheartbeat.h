#pragma once

#include <QString>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace payonce::core {

class Clock;
class IdempotencyStore;

/// Keeps the L1 records of running requests alive: every `interval`, each registered
/// record's locked_at is set to now (IdempotencyStore::heartbeat, a compare-and-set on its
/// owner), so begin() never takes over a record whose request is still running, however
/// long its gateway call takes. One thread for all records of a pipeline, stopped by the
/// destructor. A record found no longer its owner's (taken over after a stall, unlocked by
/// an operator) is marked lost and beaten no more; a failed heartbeat is tried again at
/// the next beat. Thread-safe.
class InFlightHeartbeat {
public:
    InFlightHeartbeat(IdempotencyStore &store, const Clock &clock, std::chrono::milliseconds interval);
    ~InFlightHeartbeat();
    InFlightHeartbeat(const InFlightHeartbeat &) = delete;
    InFlightHeartbeat &operator=(const InFlightHeartbeat &) = delete;

    /// Beats for one record from now until it is destroyed.
    class Registration {
    public:
        Registration(Registration &&other) noexcept;
        Registration &operator=(Registration &&) = delete;
        ~Registration();
        /// The record was found no longer this owner's.
        bool lost() const;

    private:
        friend class InFlightHeartbeat;
        Registration(InFlightHeartbeat *heartbeat, quint64 id) : m_heartbeat(heartbeat), m_id(id) {}
        InFlightHeartbeat *m_heartbeat;
        quint64 m_id;
    };

    Registration beatFor(qint64 userId, const QString &key, const QString &owner);

private:
    struct Entry {
        qint64 userId;
        QString key;
        QString owner;
        bool lost = false;
    };
    void run();
    void beatOnce();

    IdempotencyStore &m_store;
    const Clock &m_clock;
    const std::chrono::milliseconds m_interval;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::map<quint64, Entry> m_entries;
    quint64 m_nextId = 1;
    bool m_stopping = false;
    std::thread m_thread; // last: started once everything above exists
};

} // namespace payonce::core
