// Config::describeForLog: the effective settings in one line, secrets shown as <set>.
#include "config.h"

#include <QStringList>

namespace payonce::config {

namespace {

QString onOff(bool b)
{
    return b ? QStringLiteral("true") : QStringLiteral("false");
}

QString orNone(const QString &s)
{
    return s.isEmpty() ? QStringLiteral("(none)") : s;
}

QString secret(const Secret &s)
{
    return s.isEmpty() ? QStringLiteral("(none)") : QStringLiteral("<set>");
}

QString hostList(const QList<HostPort> &list)
{
    QStringList parts;
    for (const HostPort &h : list)
        parts << h.toString();
    return parts.join(u',');
}

/// Where it listens, what it stores in, how it logs and who it is.
QStringList describeProcess(const Config &c)
{
    return {
        QStringLiteral("listen=") + c.listen.toString(),
        QStringLiteral("public_base_url=")
            + (c.publicBaseUrl.isEmpty() ? QStringLiteral("(http://listen)") : c.publicBaseUrl),
        QStringLiteral("db=") + c.db.redacted(),
        QStringLiteral("redis=") + c.redis.redacted(),
        QStringLiteral("redis_sentinels=[%1] redis_master_name=%2 redis_sentinel_password=%3")
            .arg(hostList(c.redisSentinel.sentinels), orNone(c.redisSentinel.masterName),
                 secret(c.redisSentinel.password)),
        QStringLiteral("redis_cluster=[%1]").arg(hostList(c.redisCluster)),
        QStringLiteral("data_dir=") + c.dataDir,
        QStringLiteral("log_format=") + logFormatName(c.logFormat),
        QStringLiteral("log_level=") + logLevelName(c.logLevel),
        QStringLiteral("worker_threads=") + QString::number(c.workerThreads),
        QStringLiteral("db_connect_timeout_ms=") + QString::number(c.dbConnectTimeoutMs),
        QStringLiteral("redis_timeout_ms=") + QString::number(c.redisTimeoutMs),
        QStringLiteral("instances=") + QString::number(c.instances),
        QStringLiteral("instance_id=") + c.instanceId,
        QStringLiteral("config_file=") + orNone(c.configFile),
    };
}

/// Who may call it, the platforms it talks to, the simulator and QA.
QStringList describeParties(const Config &c)
{
    QStringList tokens;
    for (const AuthToken &t : c.authTokens)
        tokens << t.name + u':' + t.role;
    QStringList serials;
    for (const PlatformKey &k : c.wechat.platformKeys)
        serials << k.serial + u'=' + k.publicKeyPath;
    return {
        QStringLiteral("auth.tokens=[") + tokens.join(u',') + u']',
        QStringLiteral("wechat={mchid=%1 appid=%2 apiv3_key=%3 merchant_private_key=%4 merchant_serial=%5 "
                       "platform_keys=[%6] base_url=%7}")
            .arg(orNone(c.wechat.mchid), orNone(c.wechat.appid), secret(c.wechat.apiv3Key),
                 orNone(c.wechat.merchantPrivateKeyPath), orNone(c.wechat.merchantSerial), serials.join(u','),
                 c.wechat.baseUrl),
        QStringLiteral("alipay={app_id=%1 seller_id=%2 private_key=%3 alipay_public_key=%4 base_url=%5}")
            .arg(orNone(c.alipay.appId), orNone(c.alipay.sellerId), orNone(c.alipay.privateKeyPath),
                 orNone(c.alipay.alipayPublicKeyPath), c.alipay.baseUrl),
        QStringLiteral("sim={enabled=%1 listen=%2}").arg(onOff(c.sim.enabled), c.sim.listen.toString()),
        QStringLiteral("qa={enabled=%1 lease_ms=%2 peers=[%3] token=%4}")
            .arg(onOff(c.qa.enabled))
            .arg(c.qa.leaseMs)
            .arg(c.qa.peers.join(u','), secret(c.qa.token)),
    };
}

/// The HTTP server's limits and the background loops.
QStringList describeLoops(const Config &c)
{
    return {
        QStringLiteral(
            "http={idle_timeout_ms=%1 header_timeout_ms=%2 max_connections=%3 max_connections_per_address=%4 "
            "max_body_bytes=65536 trusted_proxies=[%5] callback_threads=%6 callback_queue=%7 "
            "gateway_threads=%8 gateway_queue=%9}")
            .arg(c.http.idleTimeoutMs)
            .arg(c.http.headerTimeoutMs)
            .arg(c.http.maxConnections)
            .arg(c.http.maxConnectionsPerAddress)
            .arg(c.http.trustedProxies.join(u','))
            .arg(c.http.callbackThreads)
            .arg(c.http.callbackQueue)
            .arg(c.http.gatewayThreads)
            .arg(c.http.gatewayQueue),
        QStringLiteral("outbox={dispatchers=%1 batch_size=%2 max_attempts=%3 claim_lease_ms=%4 webhook_urls=[%5]}")
            .arg(c.outbox.dispatchers)
            .arg(c.outbox.batchSize)
            .arg(c.outbox.maxAttempts)
            .arg(c.outbox.claimLeaseMs)
            .arg(c.outbox.webhookUrls.join(u',')),
        QStringLiteral("patrol={interval_ms=%1 stuck_paying_after_ms=%2 stuck_accepted_after_ms=%3}")
            .arg(c.patrol.intervalMs)
            .arg(c.patrol.stuckPayingAfterMs)
            .arg(c.patrol.stuckAcceptedAfterMs),
        QStringLiteral("close={pending_timeout_ms=%1 interval_ms=%2}")
            .arg(c.close.pendingTimeoutMs)
            .arg(c.close.intervalMs),
        QStringLiteral("retention={deliveries_days=%1 callback_log_days=%2 outbox_delivered_days=%3 qa_runs_days=%4 "
                       "batch_size=%5 interval_ms=%6}")
            .arg(c.retention.deliveriesDays)
            .arg(c.retention.callbackLogDays)
            .arg(c.retention.outboxDeliveredDays)
            .arg(c.retention.qaRunsDays)
            .arg(c.retention.batchSize)
            .arg(c.retention.intervalMs),
        QStringLiteral("stream={interval_ms=%1 max_per_token=%2}").arg(c.stream.intervalMs).arg(c.stream.maxPerToken),
        QStringLiteral("callbacks={commit=%1}").arg(callbackCommitName(c.callbacks.commit)),
    };
}

} // namespace

QString Config::describeForLog() const
{
    return (describeProcess(*this) + describeParties(*this) + describeLoops(*this)).join(u' ');
}

} // namespace payonce::config
