#pragma once

#include "agentprocess.h"
#include "httptestsupport.h"
#include "notificationrelay.h"
#include "simprocess.h"
#include "storagefixture.h"

#include <QList>
#include <QStringList>

#include <memory>
#include <vector>

namespace payonce::testsupport {

/// Several payonce-agent processes sharing one database and one redis-server, with one
/// payonce-sim of their own (the platform outlives any agent): the scale-out of
/// docs/design.md, started from the server harness on free loopback ports in temporary
/// folders. Every agent runs with `instances` = the number of agents, the shared Redis,
/// qa.enabled with every other agent as a QA peer (qa.peers; test hooks allowed), the patrol off, and a fixed port that survives a
/// restart. The platform is told to notify a NotificationRelay (the agents'
/// public_base_url), so the test holds every signed notification and delivers it itself
/// (CallbackStorm) — until setNotifications() says otherwise. Lives on the test's thread;
/// the relay needs its event loop.
class AgentCluster {
public:
    /// Who the platform notifies.
    enum class Notifications {
        /// The relay (the agents' public_base_url): it keeps each notification and answers
        /// FAIL, the platform's own retries are hours away (time_scale 1000), and the test
        /// is the platform that delivers and retries (paidOrders(), CallbackStorm).
        ToRelay,
        /// The agents: each trade's notify_url is the agent that confirmed it (no
        /// public_base_url: its own listen address) and the platform retries on WeChat's
        /// schedule × 0.01 by itself. What an agent's QA scenario needs: it drives the
        /// platform itself (callback targets, duplicates, faults, re-deliveries), and a
        /// notification held by the relay would never reach an agent.
        ToAgents,
    };

    /// The Redis the agents share: one redis-server at one address, a master, a replica
    /// and three Sentinels (RedisSentinelTopology) the agents find the master through, or a
    /// Redis Cluster of three masters, each with a replica (RedisClusterTopology).
    enum class Redis {
        Single,
        Sentinel,
        Cluster
    };

    /// Null and *error set when a server, the simulator or an agent did not start.
    static std::unique_ptr<AgentCluster> start(Dialect dialect, int agents, QString *error,
                                               Redis redis = Redis::Single);
    ~AgentCluster();

    int size() const { return int(m_agents.size()); }
    AgentProcess &agent(int i) { return *m_agents.at(size_t(i)); }
    bool isRunning(int i) const { return m_agents.at(size_t(i)) != nullptr; }
    QList<int> agentPorts() const;
    sql::Database &database() { return *m_db.database; }
    TestDatabase &databaseServer() { return *m_db.server; }
    RedisServer &redis() { return *m_redis; }                        ///< Redis::Single only
    RedisSentinelTopology &sentinel() { return *m_sentinel; }        ///< Redis::Sentinel only
    RedisClusterTopology &redisCluster() { return *m_redisCluster; } ///< Redis::Cluster only
    SimProcess &sim() { return *m_sim; }

    /// Switches who the platform notifies: every agent is started again on its port with
    /// the matching public_base_url, and the platform's retry pace is set. false and *error
    /// when the simulator refused or an agent did not get ready.
    bool setNotifications(Notifications notifications, QString *error);
    /// http://127.0.0.1:<port> of agent i (a QA scenario's target).
    QString agentUrl(int i) const;

    /// SIGKILL agent i and reap it; its port stays reserved for startAgent().
    void killAgent(int i);
    /// SIGTERM agent i (if running), then start it again on its port with `environment`
    /// ("NAME=value" test hooks; empty: none). false and *error when it did not get ready.
    bool startAgent(int i, const QStringList &environment, QString *error);

    /// A SKU with stock `count` + 10, then `count` orders `<prefix>0000`… (one unit each, a
    /// coupon and points owed), confirmed on WeChat through the agents in turn, paid at the
    /// simulator: the platform's signed notification of each, as the relay kept it.
    /// Empty and *error on the first failure.
    QList<CapturedRequest> paidOrders(const QString &prefix, int count, QString *error);
    /// The platform's transaction id (pay_no) a notification of paidOrders() carries, read
    /// from its encrypted resource with the simulator's APIv3 key; empty when it cannot be
    /// read.
    QString payNoOf(const CapturedRequest &notification) const;
    /// The stock left of the SKU paidOrders() made for `prefix`, by SQL; -1 on error.
    qint64 stockLeft(const QString &prefix);

    /// nginx with the shipped resources/nginx/payonce.conf in front of every agent (TLS,
    /// a certificate of its own: nginx()->certificatePath()). false and *error on failure.
    bool startNginx(QString *error);
    NginxFront *nginx() const { return m_nginx.get(); }

    /// `name` from agent i's /metrics (the exact "name{labels}" as written), or -1.
    double metric(int i, const QString &name);

private:
    AgentCluster() = default;
    AgentProcess::Options optionsFor(int i) const;
    /// The simulator's notify-config for m_notifications.
    bool configurePlatformRetries(QString *error);

    MigratedDatabase m_db;
    std::unique_ptr<RedisServer> m_redis;
    std::unique_ptr<RedisSentinelTopology> m_sentinel;
    std::unique_ptr<RedisClusterTopology> m_redisCluster;
    std::unique_ptr<SimProcess> m_sim;
    std::unique_ptr<NotificationRelay> m_relay;
    QList<int> m_ports;
    Notifications m_notifications = Notifications::ToRelay;
    std::vector<std::unique_ptr<AgentProcess>> m_agents;
    std::unique_ptr<NginxFront> m_nginx;
};

} // namespace payonce::testsupport
