#pragma once

#include "wechatnotifier.h"

#include "agentprocess.h"
#include "simprocess.h"
#include "support/serverharness.h"

#include <QTemporaryDir>

#include <memory>

namespace payonce::bench {

/// Everything a run needs, started by the benchmark and stopped with it: a throwaway
/// database of the dialect (tests/support), redis-server when asked, payonce-sim as the
/// WeChat Pay gateway (its own process, so its keys are known here), and the real
/// payonce-agent configured for them. The agent also trusts a platform key generated
/// here, so the benchmark signs WeChat notifications itself, as the platform would.
class BenchEnvironment {
public:
    struct Options {
        testsupport::Dialect dialect = testsupport::Dialect::Sqlite;
        bool redisServer = false;
        int streamIntervalMs = 0; ///< 0: the agent's default
        QStringList agentArguments;
    };
    static std::unique_ptr<BenchEnvironment> start(const Options &options, QString *error);
    ~BenchEnvironment();

    testsupport::AgentProcess &agent() { return *m_agent; }
    QString databaseUrl() const { return m_database->url(); }
    /// 0 without --redis server.
    int redisPort() const { return m_redis ? m_redis->port() : 0; }
    QString redisPassword() const { return m_redis ? m_redis->password() : QString(); }
    const WeChatNotifier &notifier() const { return *m_notifier; }
    /// The database server's main process (PostgreSQL's postmaster, mariadbd), whose CPU
    /// each phase reports; -1 for SQLite, which runs inside the agent.
    qint64 databaseServerPid() const;

private:
    BenchEnvironment() = default;
    QTemporaryDir m_keys;
    std::unique_ptr<testsupport::TestDatabase> m_database;
    std::unique_ptr<testsupport::RedisServer> m_redis;
    std::unique_ptr<testsupport::SimProcess> m_sim;
    std::unique_ptr<WeChatNotifier> m_notifier;
    std::unique_ptr<testsupport::AgentProcess> m_agent;
};

} // namespace payonce::bench
