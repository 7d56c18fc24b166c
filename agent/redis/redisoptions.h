#pragma once

#include "config/hostport.h"
#include "config/redisurl.h"
#include "core/common/result.h"

#include <QList>
#include <QString>

#include <chrono>

namespace payonce::redis {

/// Where and how to reach Redis. Parsed from redis://[[user]:password@]host[:port][/db];
/// the timeouts are set by the caller (the agent's configuration).
struct RedisOptions {
    QString host = QStringLiteral("127.0.0.1");
    int port = 6379;
    QString username; ///< ACL user; empty: the default user
    QString password; ///< empty: no AUTH
    int database = 0;

    /// Sentinel mode when not empty: the master of `masterName` is asked of these Sentinels
    /// (SENTINEL get-master-addr-by-name, the one that answered last first) on every
    /// (re)connect and followed through their +switch-master messages; host and port above
    /// are then not used. A node that answers ROLE as a replica, or a write with READONLY,
    /// makes every connection of the store ask again.
    QList<config::HostPort> sentinels;
    QString masterName;
    QString sentinelPassword; ///< AUTH for the Sentinels (requirepass in sentinel.conf); empty: none

    /// Cluster mode when not empty: the slot map is asked of these nodes (CLUSTER SLOTS,
    /// then of every node learned), each key goes to the master serving its slot, MOVED
    /// and ASK are followed, and a failed node makes the map be asked again. host, port
    /// and database above are then not used (a cluster has database 0 only).
    QList<config::HostPort> clusterSeeds;

    /// Per-call bounds on a dead or hung server: each round trip gives up after
    /// commandTimeout and a timed-out command is never repeated, so a call on an open
    /// connection fails with Unavailable within commandTimeout, and a call that has to
    /// open one within connectTimeout + commandTimeout (the handshake's first unanswered
    /// command). Inside the backoff after a failed connect, at once. A server that answers,
    /// but slowly, is bounded per round trip: a call makes at most 3 (EVALSHA, NOSCRIPT ->
    /// SCRIPT LOAD, EVALSHA), a handshake at most 8 (AUTH, SELECT, INFO, CONFIG GET, SCRIPT
    /// LOAD x 4). The first handshake with a Redis instance also waits for the database
    /// (its fence epoch), and a handshake may wait up to one commandTimeout more for another
    /// connection of the store checking the same instance's epoch.
    std::chrono::milliseconds connectTimeout{1000};
    std::chrono::milliseconds commandTimeout{1000};
    /// After a failed connect, calls fail fast (no network) for a backoff that doubles
    /// from minBackoff up to maxBackoff; the next call after it tries again.
    std::chrono::milliseconds minBackoff{50};
    std::chrono::milliseconds maxBackoff{1000};
    /// How long a pay_no stays in the seen-processed set (longer than the platforms'
    /// ~24 h retry schedule) and how many the in-process front keeps.
    std::chrono::milliseconds seenProcessedTtl{std::chrono::hours(48)};
    int seenProcessedCapacity = 100000;

    /// "host:port/db", never the password (for messages and logs). In Sentinel mode
    /// "sentinel master <name>/db"; the master's address is the store's to tell. In cluster
    /// mode "cluster <seed>,<seed>…".
    QString endpoint() const;
    bool sentinelMode() const { return !sentinels.isEmpty(); }
    bool clusterMode() const { return !clusterSeeds.isEmpty(); }

    /// From the configuration's parsed URL; Misconfigured for "embedded" and for a user
    /// without a password. The timeouts keep their defaults.
    static core::Result<RedisOptions> fromUrl(const config::RedisUrl &url);
    /// Parses with config::RedisUrl::parse() (rediss://, unix sockets, a bad port or db
    /// are Misconfigured with a message that says what is wrong), then as above.
    static core::Result<RedisOptions> fromUrl(const QString &url);
};

} // namespace payonce::redis
