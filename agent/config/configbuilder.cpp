#include "configbuilder_p.h"

#include "tokenname.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QSet>
#include <QSysInfo>
#include <QUrl>

#include <algorithm>

namespace payonce::config {

namespace {

using core::Error;
using core::Result;

/// The platforms re-send a notification for about a day (WeChat 24 h, Alipay 25 h).
constexpr int kMinimumCallbackRetentionDays = 3;

bool isHttpUrl(const QString &text)
{
    const QUrl url(text, QUrl::StrictMode);
    return url.isValid() && (url.scheme() == u"http" || url.scheme() == u"https") && !url.host().isEmpty();
}

bool isInstanceId(const QString &id)
{
    if (id.isEmpty() || id.size() > 64)
        return false;
    return std::all_of(id.begin(), id.end(), [](QChar ch) {
        return (ch >= u'a' && ch <= u'z') || (ch >= u'A' && ch <= u'Z') || (ch >= u'0' && ch <= u'9') || ch == u'.'
               || ch == u'_' || ch == u':' || ch == u'-';
    });
}

bool isSha256Hex(const QString &hex)
{
    return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](QChar ch) {
               return (ch >= u'0' && ch <= u'9') || (ch >= u'a' && ch <= u'f');
           });
}

} // namespace

Result<Config> ConfigBuilder::build()
{
    Config c;
    for (auto area :
         {&ConfigBuilder::storage, &ConfigBuilder::redisTopology, &ConfigBuilder::logging, &ConfigBuilder::limits,
          &ConfigBuilder::httpAndOutbox, &ConfigBuilder::identity, &ConfigBuilder::authTokens, &ConfigBuilder::wechat,
          &ConfigBuilder::alipay, &ConfigBuilder::simAndQa}) {
        if (auto checked = (this->*area)(c); !checked.ok())
            return checked.error();
    }
    return c;
}

Result<void> ConfigBuilder::storage(Config &c) const
{
    if (auto listen = hostPort(QStringLiteral("listen"), c.listen); !listen.ok())
        return listen;
    string(QStringLiteral("data_dir"), c.dataDir);
    if (c.dataDir.isEmpty())
        return misconfigured(originOf(QStringLiteral("data_dir")) + QStringLiteral(": must not be empty"));
    if (const Setting *s = find(QStringLiteral("db"))) {
        auto db = DatabaseUrl::parse(s->value.toString());
        if (!db)
            return misconfigured(s->origin + QStringLiteral(": ") + db.error().internalMessage);
        c.db = *db;
    } else {
        QString dir = c.dataDir;
        while (dir.size() > 1 && dir.endsWith(u'/'))
            dir.chop(1);
        c.db.sqlitePath = dir + QStringLiteral("/payonce.db");
    }
    if (const Setting *s = find(QStringLiteral("redis"))) {
        auto redis = RedisUrl::parse(s->value.toString());
        if (!redis)
            return misconfigured(s->origin + QStringLiteral(": ") + redis.error().internalMessage);
        c.redis = *redis;
    }
    return {};
}

Result<void> ConfigBuilder::redisTopology(Config &c) const
{
    if (auto sentinels = hostPortList(QStringLiteral("redis_sentinels"), 26379, c.redisSentinel.sentinels);
        !sentinels.ok())
        return sentinels;
    string(QStringLiteral("redis_master_name"), c.redisSentinel.masterName);
    if (const Setting *s = find(QStringLiteral("redis_sentinel_password")))
        c.redisSentinel.password = Secret(s->value.toString());
    if (!c.redisSentinel.sentinels.isEmpty() && c.redisSentinel.masterName.trimmed().isEmpty())
        return badValue(QStringLiteral("redis_sentinels"),
                        QStringLiteral("Sentinels are given, but no redis_master_name to ask them for"));
    if (c.redisSentinel.sentinels.isEmpty() && !c.redisSentinel.masterName.isEmpty())
        return badValue(QStringLiteral("redis_master_name"),
                        QStringLiteral("a master name without redis_sentinels to ask"));
    if (!c.redisSentinel.sentinels.isEmpty() && c.redis.embedded)
        return badValue(QStringLiteral("redis_sentinels"),
                        QStringLiteral("Sentinels need redis=redis://[:password@]any/db for the master's password "
                                       "and db (its host:port are not used)"));
    if (auto seeds = hostPortList(QStringLiteral("redis_cluster"), 6379, c.redisCluster); !seeds.ok())
        return seeds;
    if (c.redisCluster.isEmpty())
        return {};
    if (!c.redisSentinel.sentinels.isEmpty())
        return badValue(QStringLiteral("redis_cluster"),
                        QStringLiteral("Redis Cluster and Sentinel are two topologies; give one of redis_cluster and "
                                       "redis_sentinels"));
    if (c.redis.embedded)
        return badValue(QStringLiteral("redis_cluster"),
                        QStringLiteral("a cluster needs redis=redis://[:password@]any/0 for the nodes' password (its "
                                       "host:port are not used)"));
    if (c.redis.database != 0)
        return badValue(
            QStringLiteral("redis_cluster"),
            QStringLiteral("Redis Cluster has database 0 only; the redis URL names db %1").arg(c.redis.database));
    return {};
}

Result<void> ConfigBuilder::logging(Config &c) const
{
    if (const Setting *s = find(QStringLiteral("log_format"))) {
        const QString v = s->value.toString();
        if (v == u"text")
            c.logFormat = LogFormat::Text;
        else if (v == u"json")
            c.logFormat = LogFormat::Json;
        else
            return misconfigured(s->origin + QStringLiteral(": \"%1\" is not a log format (text or json)").arg(v));
    }
    if (const Setting *s = find(QStringLiteral("callbacks.commit"))) {
        const QString v = s->value.toString();
        if (v == u"one")
            c.callbacks.commit = CallbackCommit::One;
        else if (v == u"accepted_first")
            c.callbacks.commit = CallbackCommit::AcceptedFirst;
        else
            return misconfigured(s->origin
                                 + QStringLiteral(": \"%1\" is not a commit path (one or accepted_first)").arg(v));
    }
    if (const Setting *s = find(QStringLiteral("log_level"))) {
        const QString v = s->value.toString();
        if (v == u"debug")
            c.logLevel = LogLevel::Debug;
        else if (v == u"info")
            c.logLevel = LogLevel::Info;
        else if (v == u"warning")
            c.logLevel = LogLevel::Warning;
        else
            return misconfigured(s->origin
                                 + QStringLiteral(": \"%1\" is not a log level (debug, info or warning)").arg(v));
    }
    return {};
}

Result<void> ConfigBuilder::limits(Config &c) const
{
    struct Bounded {
        const char16_t *key;
        int *value;
        int min;
        int max;
    };
    const Bounded bounded[] = {
        {u"db_connect_timeout_ms", &c.dbConnectTimeoutMs, 1, 600000},
        {u"worker_threads", &c.workerThreads, 1, 256},
        {u"redis_timeout_ms", &c.redisTimeoutMs, 1, 600000},
        {u"instances", &c.instances, 1, 1024},
        {u"http.idle_timeout_ms", &c.http.idleTimeoutMs, 100, 3600000},
        {u"http.header_timeout_ms", &c.http.headerTimeoutMs, 100, 600000},
        {u"http.max_connections", &c.http.maxConnections, 1, 1000000},
        {u"http.max_connections_per_address", &c.http.maxConnectionsPerAddress, 1, 1000000},
        {u"http.callback_threads", &c.http.callbackThreads, 1, 256},
        {u"http.callback_queue", &c.http.callbackQueue, 0, 100000},
        {u"http.gateway_threads", &c.http.gatewayThreads, 1, 256},
        {u"http.gateway_queue", &c.http.gatewayQueue, 0, 100000},
        {u"outbox.dispatchers", &c.outbox.dispatchers, 0, 16},
        {u"outbox.batch_size", &c.outbox.batchSize, 1, 1000},
        {u"outbox.max_attempts", &c.outbox.maxAttempts, 1, 1000},
        {u"outbox.claim_lease_ms", &c.outbox.claimLeaseMs, 2000, 3600000},
        {u"patrol.interval_ms", &c.patrol.intervalMs, 0, 86400000},
        {u"patrol.stuck_paying_after_ms", &c.patrol.stuckPayingAfterMs, 1000, 86400000},
        {u"patrol.stuck_accepted_after_ms", &c.patrol.stuckAcceptedAfterMs, 1000, 86400000},
        {u"close.pending_timeout_ms", &c.close.pendingTimeoutMs, 0, 604800000},
        {u"close.interval_ms", &c.close.intervalMs, 100, 86400000},
        {u"retention.deliveries_days", &c.retention.deliveriesDays, 0, 36500},
        {u"retention.callback_log_days", &c.retention.callbackLogDays, 0, 36500},
        {u"retention.outbox_delivered_days", &c.retention.outboxDeliveredDays, 0, 36500},
        {u"retention.qa_runs_days", &c.retention.qaRunsDays, 0, 36500},
        {u"retention.batch_size", &c.retention.batchSize, 1, 100000},
        {u"retention.interval_ms", &c.retention.intervalMs, 0, 86400000},
        {u"stream.interval_ms", &c.stream.intervalMs, 5, 60000},
        {u"stream.max_per_token", &c.stream.maxPerToken, 1, 1000},
        {u"qa.lease_ms", &c.qa.leaseMs, 1000, 3600000},
    };
    for (const Bounded &b : bounded) {
        if (auto read = integer(QString::fromUtf16(b.key), *b.value, b.min, b.max); !read.ok())
            return read;
    }
    // A notification's duplicates keep coming for about a day: its log row and delivery
    // stay well past that.
    for (const auto &[key, days] :
         {std::pair{QStringLiteral("retention.deliveries_days"), c.retention.deliveriesDays},
          std::pair{QStringLiteral("retention.callback_log_days"), c.retention.callbackLogDays}}) {
        if (days != 0 && days < kMinimumCallbackRetentionDays)
            return badValue(
                key, QStringLiteral("must be 0 (for ever) or at least %1 days").arg(kMinimumCallbackRetentionDays));
    }
    // SQLite has one writer: a second callback thread only waits on the first's lock
    // (in SQLite's busy handler, which sleeps), so the tail grows and nothing is gained —
    // measured with 200 callbacks from 8 clients: max 1.8-2.5 s with 4 threads, under
    // 0.3 s with 1, the same 2.4 s for all.
    if (!find(QStringLiteral("http.callback_threads")) && c.db.dialect == DatabaseUrl::Dialect::Sqlite)
        c.http.callbackThreads = 1;
    if (c.instances > 1 && c.redis.embedded)
        return badValue(QStringLiteral("instances"),
                        QStringLiteral("%1 agents share this database, but the key store is the embedded one, which "
                                       "serves a single instance; give redis=redis://host:port/db")
                            .arg(c.instances));
    return {};
}

Result<void> ConfigBuilder::httpAndOutbox(Config &c) const
{
    if (const Setting *s = find(QStringLiteral("outbox.webhook_urls"))) {
        const QJsonArray urls = s->value.toArray();
        for (qsizetype i = 0; i < urls.size(); ++i) {
            const QString text = urls.at(i).toString();
            if (!isHttpUrl(text))
                return misconfigured(
                    s->origin
                    + QStringLiteral(": outbox.webhook_urls[%1] \"%2\" is not an http:// or https:// URL")
                          .arg(i)
                          .arg(text));
            c.outbox.webhookUrls.append(text);
        }
    }
    // Parsed as addresses by the HTTP server at start (QHostAddress is Qt Network's).
    if (const Setting *s = find(QStringLiteral("http.trusted_proxies"))) {
        const QJsonArray subnets = s->value.toArray();
        for (const QJsonValue &subnet : subnets)
            c.http.trustedProxies.append(subnet.toString().trimmed());
    }
    return {};
}

Result<void> ConfigBuilder::identity(Config &c) const
{
    string(QStringLiteral("public_base_url"), c.publicBaseUrl);
    if (!c.publicBaseUrl.isEmpty()) {
        const QUrl url(c.publicBaseUrl, QUrl::StrictMode);
        if (!url.isValid() || (url.scheme() != u"http" && url.scheme() != u"https") || url.host().isEmpty()
            || url.hasQuery() || url.hasFragment() || !url.userInfo().isEmpty())
            return badValue(QStringLiteral("public_base_url"),
                            QStringLiteral("\"%1\" is not an http(s)://host[:port][/path] URL").arg(c.publicBaseUrl));
        while (c.publicBaseUrl.endsWith(u'/'))
            c.publicBaseUrl.chop(1);
    }
    c.instanceId = QSysInfo::machineHostName() + u'-' + QString::number(QCoreApplication::applicationPid());
    string(QStringLiteral("instance_id"), c.instanceId);
    if (!isInstanceId(c.instanceId))
        return badValue(QStringLiteral("instance_id"),
                        QStringLiteral("\"%1\" is not 1-64 of [A-Za-z0-9._:-]").arg(c.instanceId));
    return {};
}

Result<void> ConfigBuilder::authTokens(Config &c) const
{
    const Setting *s = find(QStringLiteral("auth.tokens"));
    if (!s)
        return {};
    // By case-folded name: the index and the name as written of the first token.
    QHash<QString, QPair<qsizetype, QString>> names;
    const QJsonArray tokens = s->value.toArray();
    for (qsizetype i = 0; i < tokens.size(); ++i) {
        const QJsonObject t = tokens.at(i).toObject();
        const QString written = t.value(u"name").toString();
        const QString where = s->origin + QStringLiteral(": auth.tokens[%1]").arg(i);
        QString why;
        const auto name = TokenName::parse(written, &why);
        if (!name)
            return misconfigured(where + QStringLiteral(".name ") + why);
        if (const auto first = names.constFind(name->key); first != names.constEnd()) {
            if (first->second == written)
                return misconfigured(where + QStringLiteral(": the name \"%1\" is used twice").arg(written));
            return misconfigured(where
                                 + QStringLiteral(": the name \"%1\" is \"%2\" of auth.tokens[%3] written another way "
                                                  "(names are compared trimmed, NFKC-normalised and case-folded)")
                                       .arg(written, first->second)
                                       .arg(first->first));
        }
        names.insert(name->key, {i, written});
        AuthToken token{name->name, t.value(u"role").toString(), Secret(t.value(u"sha256").toString().toLower())};
        if (token.role != u"viewer" && token.role != u"operator" && token.role != u"approver")
            return misconfigured(where
                                 + QStringLiteral(".role \"%1\" is not viewer, operator or approver").arg(token.role));
        if (!isSha256Hex(token.sha256.reveal()))
            return misconfigured(where + QStringLiteral(".sha256 must be 64 hex digits (the SHA-256 of the token)"));
        c.authTokens.append(token);
    }
    return {};
}

Result<void> ConfigBuilder::wechat(Config &c) const
{
    string(QStringLiteral("wechat.mchid"), c.wechat.mchid);
    string(QStringLiteral("wechat.appid"), c.wechat.appid);
    if (const Setting *s = find(QStringLiteral("wechat.apiv3_key"))) {
        const QString key = s->value.toString();
        const bool ascii = std::all_of(key.begin(), key.end(),
                                       [](QChar ch) { return ch.unicode() >= 0x21 && ch.unicode() < 0x7f; });
        if (key.size() != 32 || !ascii)
            return misconfigured(
                s->origin
                + QStringLiteral(": must be 32 printable ASCII characters (got %1 characters)").arg(key.size()));
        c.wechat.apiv3Key = Secret(key);
    }
    if (auto key = existingFile(QStringLiteral("wechat.merchant_private_key"), c.wechat.merchantPrivateKeyPath);
        !key.ok())
        return key;
    string(QStringLiteral("wechat.merchant_serial"), c.wechat.merchantSerial);
    if (const Setting *s = find(QStringLiteral("wechat.platform_keys"))) {
        QSet<QString> serials;
        const QJsonArray keys = s->value.toArray();
        for (qsizetype i = 0; i < keys.size(); ++i) {
            const QJsonObject k = keys.at(i).toObject();
            const PlatformKey key{k.value(u"serial").toString(), k.value(u"public_key").toString()};
            const QString where = s->origin + QStringLiteral(": wechat.platform_keys[%1]").arg(i);
            if (key.serial.isEmpty())
                return misconfigured(where + QStringLiteral(".serial is empty"));
            if (serials.contains(key.serial))
                return misconfigured(where + QStringLiteral(": the serial \"%1\" is used twice").arg(key.serial));
            serials.insert(key.serial);
            if (!QFileInfo(key.publicKeyPath).isFile())
                return misconfigured(where
                                     + QStringLiteral(".public_key: file %1 does not exist").arg(key.publicKeyPath));
            c.wechat.platformKeys.append(key);
        }
    }
    return httpUrl(QStringLiteral("wechat.base_url"), c.wechat.baseUrl);
}

Result<void> ConfigBuilder::alipay(Config &c) const
{
    string(QStringLiteral("alipay.app_id"), c.alipay.appId);
    string(QStringLiteral("alipay.seller_id"), c.alipay.sellerId);
    if (auto key = existingFile(QStringLiteral("alipay.private_key"), c.alipay.privateKeyPath); !key.ok())
        return key;
    if (auto key = existingFile(QStringLiteral("alipay.alipay_public_key"), c.alipay.alipayPublicKeyPath); !key.ok())
        return key;
    return httpUrl(QStringLiteral("alipay.base_url"), c.alipay.baseUrl);
}

Result<void> ConfigBuilder::simAndQa(Config &c) const
{
    if (const Setting *s = find(QStringLiteral("sim.enabled")))
        c.sim.enabled = s->value.toBool();
    if (auto listen = hostPort(QStringLiteral("sim.listen"), c.sim.listen); !listen.ok())
        return listen;
    if (c.sim.enabled && c.sim.listen == c.listen)
        return badValue(
            QStringLiteral("sim.listen"),
            QStringLiteral("the simulator cannot listen on the agent's own address %1").arg(c.listen.toString()));
    if (const Setting *s = find(QStringLiteral("qa.enabled")))
        c.qa.enabled = s->value.toBool();
    if (const Setting *s = find(QStringLiteral("qa.token")))
        c.qa.token = Secret(s->value.toString());
    if (const Setting *s = find(QStringLiteral("qa.peers"))) {
        const QJsonArray urls = s->value.toArray();
        for (qsizetype i = 0; i < urls.size(); ++i) {
            QString text = urls.at(i).toString();
            while (text.endsWith(u'/'))
                text.chop(1);
            const QUrl url(text, QUrl::StrictMode);
            if (!url.isValid() || url.scheme() != u"http" || url.host().isEmpty() || !url.path().isEmpty()
                || url.hasQuery() || !url.userInfo().isEmpty())
                return misconfigured(s->origin
                                     + QStringLiteral(": qa.peers[%1] \"%2\" is not an http://host:port base URL")
                                           .arg(i)
                                           .arg(urls.at(i).toString()));
            c.qa.peers.append(text);
        }
    }
    return {};
}

Result<void> ConfigBuilder::hostPort(const QString &key, HostPort &out) const
{
    const Setting *s = find(key);
    if (!s)
        return {};
    auto parsed = HostPort::parse(s->value.toString());
    if (!parsed)
        return badValue(key, parsed.error().internalMessage);
    out = *parsed;
    return {};
}

Result<void> ConfigBuilder::hostPortList(const QString &key, int defaultPort, QList<HostPort> &out) const
{
    const Setting *s = find(key);
    if (!s)
        return {};
    const QJsonArray entries = s->value.toArray();
    for (qsizetype i = 0; i < entries.size(); ++i) {
        auto parsed = HostPort::parse(entries.at(i).toString(), defaultPort);
        if (!parsed)
            return misconfigured(s->origin
                                 + QStringLiteral(": %1[%2]: %3").arg(key).arg(i).arg(parsed.error().internalMessage));
        out.append(*parsed);
    }
    return {};
}

Result<void> ConfigBuilder::integer(const QString &key, int &out, int min, int max) const
{
    const Setting *s = find(key);
    if (!s)
        return {};
    const auto n = jsonInteger(s->value);
    if (!n || *n < min || *n > max)
        return badValue(key, QStringLiteral("must be a whole number in %1-%2").arg(min).arg(max));
    out = int(*n);
    return {};
}

void ConfigBuilder::string(const QString &key, QString &out) const
{
    if (const Setting *s = find(key))
        out = s->value.toString();
}

Result<void> ConfigBuilder::existingFile(const QString &key, QString &out) const
{
    string(key, out);
    if (!out.isEmpty() && !QFileInfo(out).isFile())
        return badValue(key, QStringLiteral("file %1 does not exist").arg(out));
    return {};
}

Result<void> ConfigBuilder::httpUrl(const QString &key, QString &out) const
{
    string(key, out);
    if (!isHttpUrl(out))
        return badValue(key, QStringLiteral("\"%1\" is not an http:// or https:// URL").arg(out));
    return {};
}

const Setting *ConfigBuilder::find(const QString &key) const
{
    const auto it = m_settings.constFind(key);
    return it == m_settings.constEnd() ? nullptr : &*it;
}

QString ConfigBuilder::originOf(const QString &key) const
{
    const Setting *s = find(key);
    return s ? s->origin : QStringLiteral("default ") + key;
}

Error ConfigBuilder::badValue(const QString &key, const QString &detail) const
{
    return misconfigured(originOf(key) + QStringLiteral(": ") + detail);
}

} // namespace payonce::config
