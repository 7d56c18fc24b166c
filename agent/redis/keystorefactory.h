#pragma once

#include "config/hostport.h"
#include "config/redisurl.h"
#include "core/ports/fenceepochsource.h"
#include "core/ports/keystore.h"

#include <QString>

#include <chrono>
#include <memory>

namespace payonce::redis {

/// What the agent's configuration says about the key store.
struct KeyStoreSettings {
    /// --redis as the configuration parsed it: embedded (the default) or a redis:// URL.
    config::RedisUrl redis;
    /// True when this agent is configured as one of several instances (sharing a
    /// PostgreSQL/MariaDB database): the embedded store would give each its own locks.
    bool severalInstances = false;
    /// Not empty: the master of masterName is found through these Sentinels; the URL gives
    /// only the password and the db.
    QList<config::HostPort> sentinels;
    QString masterName;
    QString sentinelPassword;
    /// Not empty: Redis Cluster, its slot map learned from these seed nodes.
    QList<config::HostPort> clusterSeeds;
    std::chrono::milliseconds connectTimeout{1000};
    std::chrono::milliseconds commandTimeout{1000};
};

/// The one place that turns settings into a KeyStore. Misconfigured for a bad URL or for
/// the embedded store in a multi-instance setup. Opening a Redis store does not contact
/// Redis (the agent starts degraded if Redis is down). `epochs` must outlive the store.
core::Result<std::unique_ptr<core::KeyStore>> openKeyStore(const KeyStoreSettings &settings,
                                                           core::FenceEpochSource &epochs);

} // namespace payonce::redis
