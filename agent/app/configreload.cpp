#include "configreload.h"

namespace payonce::app {

namespace {

QStringList namesOnlyIn(const QList<config::AuthToken> &these, const QList<config::AuthToken> &others)
{
    QStringList names;
    for (const config::AuthToken &token : these) {
        if (!others.contains(token))
            names << token.name;
    }
    return names;
}

} // namespace

ReloadPlan planReload(const config::Config &running, const config::Config &next)
{
    ReloadPlan plan;
    plan.tokensAdded = namesOnlyIn(next.authTokens, running.authTokens);
    plan.tokensRemoved = namesOnlyIn(running.authTokens, next.authTokens);

    // Settings the agent was built from at start (listeners, pools, storage, gateways):
    // changing them live would mean rebuilding the agent, so they are named instead.
    auto changed = [&plan](const char *key, bool same) {
        if (!same)
            plan.restartNeeded << QLatin1String(key);
    };
    changed("listen", running.listen == next.listen);
    changed("public_base_url", running.publicBaseUrl == next.publicBaseUrl);
    changed("db", running.db == next.db);
    changed("redis", running.redis == next.redis);
    changed("data_dir", running.dataDir == next.dataDir);
    changed("log_format", running.logFormat == next.logFormat);
    changed("log_level", running.logLevel == next.logLevel);
    changed("db_connect_timeout_ms", running.dbConnectTimeoutMs == next.dbConnectTimeoutMs);
    changed("worker_threads", running.workerThreads == next.workerThreads);
    changed("redis_timeout_ms", running.redisTimeoutMs == next.redisTimeoutMs);
    changed("instances", running.instances == next.instances);
    changed("instance_id", running.instanceId == next.instanceId);
    changed("wechat", running.wechat == next.wechat);
    changed("alipay", running.alipay == next.alipay);
    changed("sim", running.sim == next.sim);
    changed("qa", running.qa == next.qa);
    changed("http", running.http == next.http);
    changed("outbox", running.outbox == next.outbox);
    changed("patrol", running.patrol == next.patrol);
    changed("close", running.close == next.close);
    changed("callbacks", running.callbacks == next.callbacks);
    changed("stream.interval_ms", running.stream.intervalMs == next.stream.intervalMs);
    return plan;
}

} // namespace payonce::app
