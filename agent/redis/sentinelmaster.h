#pragma once

#include "config/hostport.h"
#include "core/common/result.h"
#include "redis/redisoptions.h"

#include <QString>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace payonce::redis {

/// Where the master of a Sentinel-monitored Redis group is, for the key store's
/// connections (RedisOptions::sentinels, masterName).
///
/// - resolve() asks the Sentinels, one after the other (the one that answered last first),
///   SENTINEL get-master-addr-by-name; every (re)connect of the store calls it, so a
///   connection never goes to an address remembered from before a failover.
/// - A watcher thread stays subscribed to +switch-master on one Sentinel (the next one when
///   it goes away) and moves the master at once, so connections still open to the old
///   master are dropped before their next command, not after a write was refused.
/// - markNotMaster(): a connection found that the node it reached is not the master
///   (ROLE answered "slave", a write answered READONLY).
///
/// Each change of the master moves generation(): a connection opened under an older
/// generation is closed before its next command. Thread-safe; hiredis stays in the .cpp.
class SentinelMaster {
public:
    explicit SentinelMaster(const RedisOptions &options);
    ~SentinelMaster();
    SentinelMaster(const SentinelMaster &) = delete;
    SentinelMaster &operator=(const SentinelMaster &) = delete;

    /// The master's address as a Sentinel tells it now. Unavailable when no Sentinel
    /// answers or none knows the master (the message says what each one said);
    /// Misconfigured when every Sentinel refused the Sentinel password (AUTH refused, or
    /// NOAUTH: it asks for one and none is set).
    core::Result<config::HostPort> resolve();

    /// The last master address learned (resolve() or +switch-master); none before the first.
    std::optional<config::HostPort> current() const;
    quint64 generation() const { return m_generation.load(); }
    /// How often the master changed since the store started (not counting the first).
    quint64 switches() const { return m_switches.load(); }

    /// `node` answered as a replica: every connection is closed before its next command and
    /// asks the Sentinels again.
    void markNotMaster(const config::HostPort &node);

    /// Starts the +switch-master watcher (once). stopWatching() (or the destructor) ends it;
    /// it is not started again.
    void startWatching();
    void stopWatching();

private:
    void moveTo(const config::HostPort &master, const QString &why);
    void watch();
    bool waitForStop(std::chrono::milliseconds duration);

    const RedisOptions m_options;
    mutable std::mutex m_mutex;
    std::optional<config::HostPort> m_master;
    int m_preferred = 0; ///< index of the Sentinel that answered last
    std::atomic<quint64> m_generation{0};
    std::atomic<quint64> m_switches{0};

    std::mutex m_stopMutex;
    std::condition_variable m_stopChanged;
    bool m_stop = false;
    std::thread m_watcher;
};

} // namespace payonce::redis
