#pragma once

// What all connections of one key store share (keystoreconnection_p.h, rediskeystore.cpp).

#include "clusterslots.h"
#include "rediskeystore.h"
#include "sentinelmaster.h"

#include "core/common/error.h"
#include "core/ports/fenceepochsource.h"

#include <QHash>
#include <QLoggingCategory>
#include <QSet>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

namespace payonce::redis {
Q_DECLARE_LOGGING_CATEGORY(lcRedis)
} // namespace payonce::redis

namespace payonce::redis::keystore {

using core::Error;
using core::ErrorCode;
using core::Result;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// Identifies backends for the per-thread connection table.
inline std::atomic<quint64> g_nextBackendId{1};

struct Backend {
    Backend(const RedisOptions &opts, core::FenceEpochSource &source)
        : options(opts), epochs(source), id(g_nextBackendId.fetch_add(1)),
          sentinel(opts.sentinelMode() ? std::make_unique<SentinelMaster>(opts) : nullptr),
          cluster(opts.clusterMode() ? std::make_unique<ClusterSlotMap>(opts) : nullptr),
          m_floorCount(opts.clusterMode() ? size_t(kClusterSlots) : 1),
          m_floors(new std::atomic<quint64>[m_floorCount]())
    {
    }

    const RedisOptions options;
    core::FenceEpochSource &epochs;
    const quint64 id;
    /// Sentinel mode: where the master is now. Null otherwise.
    const std::unique_ptr<SentinelMaster> sentinel;
    /// Cluster mode: which master serves each slot. Null otherwise.
    const std::unique_ptr<ClusterSlotMap> cluster;

    /// The node connections go to: the configured address, or the master a Sentinel names.
    /// (Cluster connections are opened to one node each.)
    Result<config::HostPort> target() const
    {
        if (sentinel)
            return sentinel->resolve();
        return config::HostPort{options.host, options.port};
    }

    /// For messages: "host:port/db", in Sentinel mode with the master's name and address, in
    /// cluster mode the seeds.
    QString endpoint() const
    {
        if (!sentinel)
            return options.endpoint();
        const auto master = sentinel->current();
        return QStringLiteral("%1/%2 (master \"%3\")")
            .arg(master ? master->toString() : QStringLiteral("(no master known)"))
            .arg(options.database)
            .arg(options.masterName);
    }
    std::atomic<bool> closed{false};
    std::atomic<bool> degraded{false};
    /// The fence epoch in force on the instance last connected to; in cluster mode the
    /// largest in force on any slot met (for topology()).
    std::atomic<quint64> epochInForce{0};
    /// Held while a connection checks (and if need be installs) the instance's fence epoch.
    std::timed_mutex epochCheck;

    void noteEpoch(quint64 epoch)
    {
        if (!cluster) {
            epochInForce.store(epoch);
            return;
        }
        quint64 seen = epochInForce.load();
        while (epoch > seen && !epochInForce.compare_exchange_weak(seen, epoch)) {
        }
    }

    /// The master-change count that ends a backoff (Sentinel and cluster modes).
    quint64 topologyGeneration() const
    {
        if (sentinel)
            return sentinel->generation();
        if (cluster)
            return cluster->generation();
        return 0;
    }

    /// Before a connect to `node` (its "host:port"; empty outside cluster mode: one backoff
    /// for the store): an Error if we are inside the backoff after a failed connect.
    std::optional<Error> backoffGate(const QString &node)
    {
        std::lock_guard lock(m_mutex);
        const auto found = m_backoffs.constFind(node);
        if (found == m_backoffs.constEnd())
            return std::nullopt;
        const auto now = Clock::now();
        if (now >= found->nextConnectAt)
            return std::nullopt;
        // A new master since the failed connect ends the backoff — the connects failed
        // against the old one; the new one is worth trying at once.
        if (topologyGeneration() != found->failedAtGeneration)
            return std::nullopt;
        const auto left = std::chrono::duration_cast<milliseconds>(found->nextConnectAt - now);
        Error error = found->lastError;
        error.internalMessage += QStringLiteral(" (next attempt in %1 ms)").arg(left.count());
        return error;
    }

    void connectFailed(const QString &node, const Error &error)
    {
        degraded.store(true);
        {
            std::lock_guard lock(m_mutex);
            Backoff &backoff = m_backoffs[node];
            backoff.backoff = backoff.backoff.count() == 0 ? options.minBackoff
                                                           : std::min(backoff.backoff * 2, options.maxBackoff);
            backoff.nextConnectAt = Clock::now() + backoff.backoff;
            backoff.lastError = error;
            backoff.failedAtGeneration = topologyGeneration();
        }
        if (cluster) // a master that cannot be reached may have been failed over
            cluster->refreshSoon();
    }

    /// Returns true when this run_id was never seen by this store (scripts to load).
    bool connected(const QString &node, const QString &runId)
    {
        std::lock_guard lock(m_mutex);
        m_backoffs.remove(node);
        if (m_lastRunId != runId) {
            if (!m_lastRunId.isEmpty() && !cluster)
                qCInfo(lcRedis).noquote() << QStringLiteral("Redis at %1 is a new instance: run_id %2 (was %3)")
                                                 .arg(endpoint(), runId, m_lastRunId);
            m_lastRunId = runId;
        }
        return !m_scriptsLoadedFor.contains(runId);
    }

    /// True until the eviction policy of this run_id was checked (policyChecked()).
    bool policyToCheck(const QString &runId) const
    {
        std::lock_guard lock(m_mutex);
        return !m_policyCheckedFor.contains(runId);
    }

    void policyChecked(const QString &runId)
    {
        std::lock_guard lock(m_mutex);
        m_policyCheckedFor.insert(runId);
    }

    void scriptsLoaded(const QString &runId)
    {
        std::lock_guard lock(m_mutex);
        m_scriptsLoadedFor.insert(runId);
    }

    QString lastRunId() const
    {
        std::lock_guard lock(m_mutex);
        return m_lastRunId;
    }

    /// The largest token this store has handed out from one fence state (index 0; in
    /// cluster mode one per slot, whose states have epochs of their own): the floor every
    /// later one from that state must pass.
    quint64 highestToken(int floorIndex) const { return m_floors[size_t(floorIndex) % m_floorCount].load(); }
    void sawToken(int floorIndex, quint64 token)
    {
        std::atomic<quint64> &floor = m_floors[size_t(floorIndex) % m_floorCount];
        quint64 seen = floor.load();
        while (token > seen && !floor.compare_exchange_weak(seen, token)) {
        }
    }

    Error unavailable(const QString &what) const
    {
        return Error::make(ErrorCode::Unavailable, QStringLiteral("Redis at %1: %2").arg(endpoint(), what),
                           QStringLiteral("the key store is unavailable"));
    }

private:
    struct Backoff {
        Clock::time_point nextConnectAt;
        milliseconds backoff{0};
        Error lastError;
        quint64 failedAtGeneration = 0; ///< the topology's generation at the failed connect
    };

    mutable std::mutex m_mutex;
    QHash<QString, Backoff> m_backoffs; ///< by node ("" outside cluster mode)
    QString m_lastRunId;
    QSet<QString> m_scriptsLoadedFor;
    QSet<QString> m_policyCheckedFor;
    const size_t m_floorCount;
    const std::unique_ptr<std::atomic<quint64>[]> m_floors;
};

} // namespace payonce::redis::keystore
