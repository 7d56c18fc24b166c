#pragma once

#include "config/hostport.h"
#include "core/common/result.h"
#include "redis/hashslot.h"
#include "redis/redisoptions.h"

#include <QList>

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

namespace payonce::redis {

/// Which master serves each of Redis Cluster's 16 384 hash slots, for the key store's
/// connections (RedisOptions::clusterSeeds).
///
/// - refresh() asks CLUSTER SLOTS of the nodes it knows (the one that answered last, the
///   masters learned, then the seeds) and takes the first full answer; a slot no master
///   serves is left unknown (a call for it is Unavailable, the cluster is down there).
/// - moved(): a node answered MOVED: that slot has a new owner (a failover, a resharding);
///   the slot changes at once and the map is asked again (refreshSoon()) for the rest.
/// - masterFor() asks the map again (refreshSoon()) when it is older than 10 s, so the
///   masters reported follow the cluster even where no call was redirected.
/// - refreshSoon(): a node could not be reached: the map is asked again, at most once per
///   100 ms however many threads hit the dead node at once.
///
/// Every change of the set of masters moves generation() and counts in switches(). The
/// connections to a master stay open across changes; a call routes by slot each time.
/// Thread-safe; hiredis stays in the .cpp.
class ClusterSlotMap {
public:
    explicit ClusterSlotMap(const RedisOptions &options);
    ClusterSlotMap(const ClusterSlotMap &) = delete;
    ClusterSlotMap &operator=(const ClusterSlotMap &) = delete;

    /// The master serving `slot`; asks the cluster first when the map has none for it.
    /// Unavailable when no node answers or nobody serves the slot; Misconfigured when every
    /// node that answered refused the password.
    core::Result<config::HostPort> masterFor(int slot);
    void moved(int slot, const config::HostPort &master);
    core::Result<void> refresh();
    void refreshSoon();

    /// The masters of the last map, sorted ("host:port" order); empty before the first.
    QList<config::HostPort> masters() const;
    quint64 generation() const { return m_generation.load(); }
    /// How often the set of masters changed since the first map (failovers seen).
    quint64 switches() const { return m_switches.load(); }

private:
    QList<config::HostPort> mastersLocked() const; ///< m_mutex held
    void record(int slot, const config::HostPort &master);
    void adopt(const std::array<qint16, kClusterSlots> &owners, const QList<config::HostPort> &nodes,
               const config::HostPort &answeredBy);

    const RedisOptions m_options;
    mutable std::mutex m_mutex;
    std::mutex m_refreshing;                     ///< one refresh at a time; the others wait for its map
    std::array<qint16, kClusterSlots> m_owner{}; ///< index into m_nodes, -1: unknown
    QList<config::HostPort> m_nodes;             ///< every master ever named, by index
    std::optional<config::HostPort> m_lastAnswered;
    std::chrono::steady_clock::time_point m_refreshedAt;
    std::atomic<quint64> m_generation{0};
    std::atomic<quint64> m_switches{0};
    bool m_haveMap = false;
};

} // namespace payonce::redis
