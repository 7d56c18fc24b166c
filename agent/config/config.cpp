#include "config.h"

#include "configoptions.h"
#include "tokenname.h"
#include "urlparts_p.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSet>
#include <QSysInfo>
#include <QUrl>

#include <algorithm>
#include <limits>
#include <optional>

namespace payonce::config {

namespace {

using core::Error;
using core::ErrorCode;
using core::Result;

Error misconfigured(const QString &message)
{
    return Error::make(ErrorCode::Misconfigured, message);
}

// JSON has no comments: a key that starts with "//" is one, in any object, and is
// skipped without a warning (resources/payonce.example.json is annotated this way).
bool isComment(const QString &key)
{
    return key.startsWith(u"//");
}

// A value as it stands after layering, with where it came from for error messages.
struct Setting {
    QJsonValue value;
    QString origin;
};

QString jsonTypeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    case QJsonValue::Undefined: break;
    }
    return QStringLiteral("undefined");
}

// Integral JSON numbers only; QJsonValue::toInteger refuses 1.5 and out-of-range values.
std::optional<qint64> jsonInteger(const QJsonValue &v)
{
    constexpr qint64 sentinel = std::numeric_limits<qint64>::min();
    if (!v.isDouble())
        return std::nullopt;
    const qint64 n = v.toInteger(sentinel);
    if (n == sentinel)
        return std::nullopt;
    return n;
}

std::optional<bool> textBoolean(const QString &text)
{
    const QString t = text.toLower();
    if (t == u"1" || t == u"true" || t == u"yes" || t == u"on")
        return true;
    if (t == u"0" || t == u"false" || t == u"no" || t == u"off")
        return false;
    return std::nullopt;
}

QString resolved(const QString &path, const QString &baseDir)
{
    if (path.isEmpty() || baseDir.isEmpty() || QDir::isAbsolutePath(path))
        return path;
    return QDir::cleanPath(QDir(baseDir).absoluteFilePath(path));
}

// The fields of an array element (auth.tokens[i], wechat.platform_keys[i]).
struct FieldSpec {
    QStringView name;
    bool isPath;
};

/// The platforms re-send a notification for about a day (WeChat 24 h, Alipay 25 h).
constexpr int kMinimumCallbackRetentionDays = 3;

constexpr FieldSpec kTokenFields[] = {{u"name", false}, {u"role", false}, {u"sha256", false}};
constexpr FieldSpec kPlatformKeyFields[] = {{u"serial", false}, {u"public_key", true}};

class Layers {
public:
    QHash<QString, Setting> settings;
    QStringList warnings;

    // A value from the config file: JSON types are checked here; relative paths are
    // resolved against the file's folder.
    Result<void> takeFromFile(const OptionSpec &spec, const QJsonValue &value, const QString &filePath)
    {
        const QString origin = QStringLiteral("config file %1, key \"%2\"").arg(filePath, spec.key);
        const QString baseDir = QFileInfo(filePath).absolutePath();
        auto typeError = [&](const QString &expected) {
            return misconfigured(origin + QStringLiteral(": must be ") + expected + QStringLiteral(", not ")
                                 + jsonTypeName(value));
        };
        switch (spec.kind) {
        case OptionKind::ConfigFile:
            warnings << origin + QStringLiteral(": ignored (a config file cannot name another)");
            return {};
        case OptionKind::String:
        case OptionKind::Secret:
            if (!value.isString())
                return typeError(QStringLiteral("a string"));
            break;
        case OptionKind::Path:
            if (!value.isString())
                return typeError(QStringLiteral("a string"));
            settings.insert(spec.key.toString(), {resolved(value.toString(), baseDir), origin});
            return {};
        case OptionKind::Database: {
            if (!value.isString())
                return typeError(QStringLiteral("a string"));
            QString text = value.toString();
            if (text.startsWith(u"sqlite:") && text.mid(7) != u":memory:")
                text = QStringLiteral("sqlite:") + resolved(text.mid(7), baseDir);
            settings.insert(spec.key.toString(), {text, origin});
            return {};
        }
        case OptionKind::Integer:
            if (!jsonInteger(value))
                return typeError(QStringLiteral("an integer"));
            break;
        case OptionKind::Boolean:
            if (!value.isBool())
                return typeError(QStringLiteral("true or false"));
            break;
        case OptionKind::AuthTokens:
        case OptionKind::PlatformKeys: return takeArray(spec, value, origin, baseDir);
        case OptionKind::UrlList:
        case OptionKind::SubnetList:
        case OptionKind::HostPortList: return takeStringList(spec, value, origin);
        }
        settings.insert(spec.key.toString(), {value, origin});
        return {};
    }

    // A value from the environment or a flag: text converted to the JSON a file would hold.
    Result<void> takeFromText(const OptionSpec &spec, const QString &text, const QString &origin)
    {
        switch (spec.kind) {
        case OptionKind::ConfigFile: return {};
        case OptionKind::String:
        case OptionKind::Secret:
        case OptionKind::Path:
        case OptionKind::Database: settings.insert(spec.key.toString(), {text, origin}); return {};
        case OptionKind::Integer: {
            const auto n = detail::parseDigits(text, 18);
            if (!n)
                return misconfigured(origin + QStringLiteral(": \"%1\" is not a whole number").arg(text));
            settings.insert(spec.key.toString(), {QJsonValue(*n), origin});
            return {};
        }
        case OptionKind::Boolean: {
            const auto b = textBoolean(text);
            if (!b)
                return misconfigured(
                    origin + QStringLiteral(": \"%1\" is not a boolean (true/false, 1/0, yes/no, on/off)").arg(text));
            settings.insert(spec.key.toString(), {*b, origin});
            return {};
        }
        case OptionKind::AuthTokens:
        case OptionKind::PlatformKeys:
        case OptionKind::UrlList:
        case OptionKind::SubnetList:
        case OptionKind::HostPortList: {
            // The text may hold secrets: the error never quotes it.
            QJsonParseError parseError;
            const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &parseError);
            if (parseError.error != QJsonParseError::NoError || !doc.isArray())
                return misconfigured(origin
                                     + QStringLiteral(": must be a JSON array (%1)")
                                           .arg(parseError.error != QJsonParseError::NoError
                                                    ? parseError.errorString()
                                                    : QStringLiteral("got another JSON value")));
            if (spec.kind == OptionKind::UrlList || spec.kind == OptionKind::SubnetList
                || spec.kind == OptionKind::HostPortList)
                return takeStringList(spec, doc.array(), origin);
            return takeArray(spec, doc.array(), origin, QString());
        }
        }
        Q_UNREACHABLE();
    }

private:
    Result<void> takeStringList(const OptionSpec &spec, const QJsonValue &value, const QString &origin)
    {
        if (!value.isArray())
            return misconfigured(origin + QStringLiteral(": must be an array of strings, not ") + jsonTypeName(value));
        const QJsonArray in = value.toArray();
        for (qsizetype i = 0; i < in.size(); ++i) {
            if (!in.at(i).isString())
                return misconfigured(origin
                                     + QStringLiteral(": %1[%2] must be a string, not %3")
                                           .arg(spec.key)
                                           .arg(i)
                                           .arg(jsonTypeName(in.at(i))));
        }
        settings.insert(spec.key.toString(), {in, origin});
        return {};
    }

    Result<void> takeArray(const OptionSpec &spec, const QJsonValue &value, const QString &origin,
                           const QString &baseDir)
    {
        if (!value.isArray())
            return misconfigured(origin + QStringLiteral(": must be an array, not ") + jsonTypeName(value));
        const std::span<const FieldSpec> fields = spec.kind == OptionKind::AuthTokens
                                                      ? std::span<const FieldSpec>(kTokenFields)
                                                      : std::span<const FieldSpec>(kPlatformKeyFields);
        QJsonArray out;
        const QJsonArray in = value.toArray();
        for (qsizetype i = 0; i < in.size(); ++i) {
            const QString where = QStringLiteral("%1[%2]").arg(spec.key).arg(i);
            if (!in.at(i).isObject())
                return misconfigured(
                    origin + QStringLiteral(": %1 must be an object, not %2").arg(where, jsonTypeName(in.at(i))));
            const QJsonObject element = in.at(i).toObject();
            QJsonObject normalized;
            for (const FieldSpec &field : fields) {
                const QJsonValue v = element.value(field.name);
                if (v.isUndefined())
                    return misconfigured(origin + QStringLiteral(": %1.%2 is missing").arg(where, field.name));
                if (!v.isString())
                    return misconfigured(
                        origin
                        + QStringLiteral(": %1.%2 must be a string, not %3").arg(where, field.name, jsonTypeName(v)));
                normalized.insert(field.name, field.isPath ? resolved(v.toString(), baseDir) : v.toString());
            }
            for (auto it = element.begin(); it != element.end(); ++it) {
                if (isComment(it.key()))
                    continue;
                const bool known = std::any_of(fields.begin(), fields.end(),
                                               [&](const FieldSpec &f) { return f.name == it.key(); });
                if (!known)
                    warnings << origin + QStringLiteral(": unknown key \"%1.%2\" ignored").arg(where, it.key());
            }
            out.append(normalized);
        }
        settings.insert(spec.key.toString(), {out, origin});
        return {};
    }
};

Result<void> readConfigFile(const QString &path, Layers &layers)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return misconfigured(QStringLiteral("config file %1: cannot read it: %2").arg(path, file.errorString()));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return misconfigured(QStringLiteral("config file %1: invalid JSON at offset %2: %3")
                                 .arg(path)
                                 .arg(parseError.offset)
                                 .arg(parseError.errorString()));
    if (!doc.isObject())
        return misconfigured(QStringLiteral("config file %1: the top level must be a JSON object").arg(path));

    // Sections ("wechat", ...) are the prefixes of dotted keys in the table.
    QSet<QString> sections;
    for (const OptionSpec &spec : optionTable()) {
        const qsizetype dot = spec.key.indexOf(u'.');
        if (dot > 0)
            sections.insert(spec.key.left(dot).toString());
    }

    const QJsonObject root = doc.object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (isComment(it.key()))
            continue;
        if (sections.contains(it.key())) {
            if (!it.value().isObject())
                return misconfigured(QStringLiteral("config file %1, key \"%2\": must be an object, not %3")
                                         .arg(path, it.key(), jsonTypeName(it.value())));
            const QJsonObject section = it.value().toObject();
            for (auto sub = section.begin(); sub != section.end(); ++sub) {
                if (isComment(sub.key()))
                    continue;
                const QString key = it.key() + u'.' + sub.key();
                const OptionSpec *spec = findOption(key);
                if (!spec) {
                    layers.warnings << QStringLiteral("config file %1: unknown key \"%2\" ignored").arg(path, key);
                    continue;
                }
                if (auto r = layers.takeFromFile(*spec, sub.value(), path); !r)
                    return r;
            }
            continue;
        }
        const OptionSpec *spec = findOption(it.key());
        if (!spec || spec->key.contains(u'.')) {
            layers.warnings << QStringLiteral("config file %1: unknown key \"%2\" ignored").arg(path, it.key());
            continue;
        }
        if (auto r = layers.takeFromFile(*spec, it.value(), path); !r)
            return r;
    }
    return {};
}

// Turns the layered settings into a Config, checking each value. Every error names the
// source of the bad value.
class Builder {
public:
    explicit Builder(const QHash<QString, Setting> &settings) : m_settings(settings) {}

    Result<Config> build()
    {
        Config c;
        Error error;
        auto fail = [&](const QString &key, const QString &detail) {
            error = misconfigured(originOf(key) + QStringLiteral(": ") + detail);
            return false;
        };
        auto hostPort = [&](const QString &key, HostPort &out) {
            const Setting *s = find(key);
            if (!s)
                return true;
            auto parsed = HostPort::parse(s->value.toString());
            if (!parsed)
                return fail(key, parsed.error().internalMessage);
            out = *parsed;
            return true;
        };
        auto integer = [&](const QString &key, int &out, int min, int max) {
            const Setting *s = find(key);
            if (!s)
                return true;
            const auto n = jsonInteger(s->value);
            if (!n || *n < min || *n > max)
                return fail(key, QStringLiteral("must be a whole number in %1-%2").arg(min).arg(max));
            out = int(*n);
            return true;
        };
        auto string = [&](const QString &key, QString &out) {
            if (const Setting *s = find(key))
                out = s->value.toString();
        };
        auto existingFile = [&](const QString &key, QString &out) {
            string(key, out);
            if (!out.isEmpty() && !QFileInfo(out).isFile())
                return fail(key, QStringLiteral("file %1 does not exist").arg(out));
            return true;
        };
        auto httpUrl = [&](const QString &key, QString &out) {
            string(key, out);
            if (!isHttpUrl(out))
                return fail(key, QStringLiteral("\"%1\" is not an http:// or https:// URL").arg(out));
            return true;
        };

        if (!hostPort(QStringLiteral("listen"), c.listen))
            return error;

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
        if (const Setting *s = find(QStringLiteral("redis_sentinels"))) {
            const QJsonArray sentinels = s->value.toArray();
            for (qsizetype i = 0; i < sentinels.size(); ++i) {
                auto parsed = HostPort::parse(sentinels.at(i).toString(), 26379);
                if (!parsed)
                    return misconfigured(
                        s->origin
                        + QStringLiteral(": redis_sentinels[%1]: %2").arg(i).arg(parsed.error().internalMessage));
                c.redisSentinel.sentinels.append(*parsed);
            }
        }
        string(QStringLiteral("redis_master_name"), c.redisSentinel.masterName);
        if (const Setting *s = find(QStringLiteral("redis_sentinel_password")))
            c.redisSentinel.password = Secret(s->value.toString());
        if (!c.redisSentinel.sentinels.isEmpty() && c.redisSentinel.masterName.trimmed().isEmpty())
            return misconfigured(originOf(QStringLiteral("redis_sentinels"))
                                 + QStringLiteral(": Sentinels are given, but no redis_master_name to ask them for"));
        if (c.redisSentinel.sentinels.isEmpty() && !c.redisSentinel.masterName.isEmpty())
            return misconfigured(originOf(QStringLiteral("redis_master_name"))
                                 + QStringLiteral(": a master name without redis_sentinels to ask"));
        if (!c.redisSentinel.sentinels.isEmpty() && c.redis.embedded)
            return misconfigured(originOf(QStringLiteral("redis_sentinels"))
                                 + QStringLiteral(": Sentinels need redis=redis://[:password@]any/db for the "
                                                  "master's password and db (its host:port are not used)"));
        if (const Setting *s = find(QStringLiteral("redis_cluster"))) {
            const QJsonArray seeds = s->value.toArray();
            for (qsizetype i = 0; i < seeds.size(); ++i) {
                auto parsed = HostPort::parse(seeds.at(i).toString(), 6379);
                if (!parsed)
                    return misconfigured(
                        s->origin
                        + QStringLiteral(": redis_cluster[%1]: %2").arg(i).arg(parsed.error().internalMessage));
                c.redisCluster.append(*parsed);
            }
        }
        if (!c.redisCluster.isEmpty()) {
            if (!c.redisSentinel.sentinels.isEmpty())
                return misconfigured(originOf(QStringLiteral("redis_cluster"))
                                     + QStringLiteral(": Redis Cluster and Sentinel are two topologies; give one of "
                                                      "redis_cluster and redis_sentinels"));
            if (c.redis.embedded)
                return misconfigured(originOf(QStringLiteral("redis_cluster"))
                                     + QStringLiteral(": a cluster needs redis=redis://[:password@]any/0 for the "
                                                      "nodes' password (its host:port are not used)"));
            if (c.redis.database != 0)
                return misconfigured(originOf(QStringLiteral("redis_cluster"))
                                     + QStringLiteral(": Redis Cluster has database 0 only; the redis URL names db %1")
                                           .arg(c.redis.database));
        }

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

        if (!integer(QStringLiteral("db_connect_timeout_ms"), c.dbConnectTimeoutMs, 1, 600000)
            || !integer(QStringLiteral("worker_threads"), c.workerThreads, 1, 256)
            || !integer(QStringLiteral("redis_timeout_ms"), c.redisTimeoutMs, 1, 600000)
            || !integer(QStringLiteral("instances"), c.instances, 1, 1024)
            || !integer(QStringLiteral("http.idle_timeout_ms"), c.http.idleTimeoutMs, 100, 3600000)
            || !integer(QStringLiteral("http.header_timeout_ms"), c.http.headerTimeoutMs, 100, 600000)
            || !integer(QStringLiteral("http.max_connections"), c.http.maxConnections, 1, 1000000)
            || !integer(QStringLiteral("http.max_connections_per_address"), c.http.maxConnectionsPerAddress, 1, 1000000)
            || !integer(QStringLiteral("http.callback_threads"), c.http.callbackThreads, 1, 256)
            || !integer(QStringLiteral("http.callback_queue"), c.http.callbackQueue, 0, 100000)
            || !integer(QStringLiteral("http.gateway_threads"), c.http.gatewayThreads, 1, 256)
            || !integer(QStringLiteral("http.gateway_queue"), c.http.gatewayQueue, 0, 100000)
            || !integer(QStringLiteral("outbox.dispatchers"), c.outbox.dispatchers, 0, 16)
            || !integer(QStringLiteral("outbox.batch_size"), c.outbox.batchSize, 1, 1000)
            || !integer(QStringLiteral("outbox.max_attempts"), c.outbox.maxAttempts, 1, 1000)
            || !integer(QStringLiteral("outbox.claim_lease_ms"), c.outbox.claimLeaseMs, 2000, 3600000)
            || !integer(QStringLiteral("patrol.interval_ms"), c.patrol.intervalMs, 0, 86400000)
            || !integer(QStringLiteral("patrol.stuck_paying_after_ms"), c.patrol.stuckPayingAfterMs, 1000, 86400000)
            || !integer(QStringLiteral("patrol.stuck_accepted_after_ms"), c.patrol.stuckAcceptedAfterMs, 1000, 86400000)
            || !integer(QStringLiteral("close.pending_timeout_ms"), c.close.pendingTimeoutMs, 0, 604800000)
            || !integer(QStringLiteral("close.interval_ms"), c.close.intervalMs, 100, 86400000)
            || !integer(QStringLiteral("retention.deliveries_days"), c.retention.deliveriesDays, 0, 36500)
            || !integer(QStringLiteral("retention.callback_log_days"), c.retention.callbackLogDays, 0, 36500)
            || !integer(QStringLiteral("retention.outbox_delivered_days"), c.retention.outboxDeliveredDays, 0, 36500)
            || !integer(QStringLiteral("retention.qa_runs_days"), c.retention.qaRunsDays, 0, 36500)
            || !integer(QStringLiteral("retention.batch_size"), c.retention.batchSize, 1, 100000)
            || !integer(QStringLiteral("retention.interval_ms"), c.retention.intervalMs, 0, 86400000)
            || !integer(QStringLiteral("stream.interval_ms"), c.stream.intervalMs, 5, 60000)
            || !integer(QStringLiteral("stream.max_per_token"), c.stream.maxPerToken, 1, 1000))
            return error;
        // A notification's duplicates keep coming for about a day: its log row and delivery
        // stay well past that.
        for (const auto &[key, days] :
             {std::pair{QStringLiteral("retention.deliveries_days"), c.retention.deliveriesDays},
              std::pair{QStringLiteral("retention.callback_log_days"), c.retention.callbackLogDays}}) {
            if (days != 0 && days < kMinimumCallbackRetentionDays) {
                fail(key,
                     QStringLiteral("must be 0 (for ever) or at least %1 days").arg(kMinimumCallbackRetentionDays));
                return error;
            }
        }
        if (const Setting *s = find(QStringLiteral("outbox.webhook_urls"))) {
            const QJsonArray urls = s->value.toArray();
            for (qsizetype i = 0; i < urls.size(); ++i) {
                const QString text = urls.at(i).toString();
                if (!isHttpUrl(text))
                    return misconfigured(s->origin
                                         + QStringLiteral(": outbox.webhook_urls[%1] \"%2\" is not an http:// "
                                                          "or https:// URL")
                                               .arg(i)
                                               .arg(text));
                c.outbox.webhookUrls.append(text);
            }
        }
        // SQLite has one writer: a second callback thread only waits on the first's lock
        // (in SQLite's busy handler, which sleeps), so the tail grows and nothing is gained —
        // measured with 200 callbacks from 8 clients: max 1.8-2.5 s with 4 threads, under
        // 0.3 s with 1, the same 2.4 s for all.
        if (!find(QStringLiteral("http.callback_threads")) && c.db.dialect == DatabaseUrl::Dialect::Sqlite)
            c.http.callbackThreads = 1;
        // Parsed as addresses by the HTTP server at start (QHostAddress is Qt Network's).
        if (const Setting *s = find(QStringLiteral("http.trusted_proxies"))) {
            const QJsonArray subnets = s->value.toArray();
            for (const QJsonValue &subnet : subnets)
                c.http.trustedProxies.append(subnet.toString().trimmed());
        }
        if (c.instances > 1 && c.redis.embedded) {
            return misconfigured(
                originOf(QStringLiteral("instances"))
                + QStringLiteral(": %1 agents share this database, but the key store is the embedded "
                                 "one, which serves a single instance; give redis=redis://host:port/db")
                      .arg(c.instances));
        }

        string(QStringLiteral("public_base_url"), c.publicBaseUrl);
        if (!c.publicBaseUrl.isEmpty()) {
            const QUrl url(c.publicBaseUrl, QUrl::StrictMode);
            if (!url.isValid() || (url.scheme() != u"http" && url.scheme() != u"https") || url.host().isEmpty()
                || url.hasQuery() || url.hasFragment() || !url.userInfo().isEmpty())
                return misconfigured(
                    originOf(QStringLiteral("public_base_url"))
                    + QStringLiteral(": \"%1\" is not an http(s)://host[:port][/path] URL").arg(c.publicBaseUrl));
            while (c.publicBaseUrl.endsWith(u'/'))
                c.publicBaseUrl.chop(1);
        }

        c.instanceId = QSysInfo::machineHostName() + u'-' + QString::number(QCoreApplication::applicationPid());
        string(QStringLiteral("instance_id"), c.instanceId);
        if (!isInstanceId(c.instanceId))
            return misconfigured(originOf(QStringLiteral("instance_id"))
                                 + QStringLiteral(": \"%1\" is not 1-64 of [A-Za-z0-9._:-]").arg(c.instanceId));

        if (const Setting *s = find(QStringLiteral("auth.tokens"))) {
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
                                         + QStringLiteral(": the name \"%1\" is \"%2\" of auth.tokens[%3] written "
                                                          "another way (names are compared trimmed, "
                                                          "NFKC-normalised and case-folded)")
                                               .arg(written, first->second)
                                               .arg(first->first));
                }
                names.insert(name->key, {i, written});
                AuthToken token{name->name, t.value(u"role").toString(),
                                Secret(t.value(u"sha256").toString().toLower())};
                if (token.role != u"viewer" && token.role != u"operator" && token.role != u"approver")
                    return misconfigured(
                        where + QStringLiteral(".role \"%1\" is not viewer, operator or approver").arg(token.role));
                if (!isSha256Hex(token.sha256.reveal()))
                    return misconfigured(where
                                         + QStringLiteral(".sha256 must be 64 hex digits (the SHA-256 of the token)"));
                c.authTokens.append(token);
            }
        }

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
        if (!existingFile(QStringLiteral("wechat.merchant_private_key"), c.wechat.merchantPrivateKeyPath))
            return error;
        string(QStringLiteral("wechat.merchant_serial"), c.wechat.merchantSerial);
        if (const Setting *s = find(QStringLiteral("wechat.platform_keys"))) {
            QSet<QString> serials;
            const QJsonArray keys = s->value.toArray();
            for (qsizetype i = 0; i < keys.size(); ++i) {
                const QJsonObject k = keys.at(i).toObject();
                const PlatformKey key{k.value(u"serial").toString(), k.value(u"public_key").toString()};
                const QString where = QStringLiteral("wechat.platform_keys[%1]").arg(i);
                if (key.serial.isEmpty())
                    return misconfigured(s->origin + QStringLiteral(": ") + where + QStringLiteral(".serial is empty"));
                if (serials.contains(key.serial))
                    return misconfigured(s->origin + QStringLiteral(": ") + where
                                         + QStringLiteral(": the serial \"%1\" is used twice").arg(key.serial));
                serials.insert(key.serial);
                if (!QFileInfo(key.publicKeyPath).isFile())
                    return misconfigured(
                        s->origin + QStringLiteral(": ") + where
                        + QStringLiteral(".public_key: file %1 does not exist").arg(key.publicKeyPath));
                c.wechat.platformKeys.append(key);
            }
        }
        if (!httpUrl(QStringLiteral("wechat.base_url"), c.wechat.baseUrl))
            return error;

        string(QStringLiteral("alipay.app_id"), c.alipay.appId);
        string(QStringLiteral("alipay.seller_id"), c.alipay.sellerId);
        if (!existingFile(QStringLiteral("alipay.private_key"), c.alipay.privateKeyPath)
            || !existingFile(QStringLiteral("alipay.alipay_public_key"), c.alipay.alipayPublicKeyPath)
            || !httpUrl(QStringLiteral("alipay.base_url"), c.alipay.baseUrl))
            return error;

        if (const Setting *s = find(QStringLiteral("sim.enabled")))
            c.sim.enabled = s->value.toBool();
        if (!hostPort(QStringLiteral("sim.listen"), c.sim.listen))
            return error;
        if (c.sim.enabled && c.sim.listen == c.listen)
            return misconfigured(originOf(QStringLiteral("sim.listen"))
                                 + QStringLiteral(": the simulator cannot listen on the agent's own address %1")
                                       .arg(c.listen.toString()));
        if (const Setting *s = find(QStringLiteral("qa.enabled")))
            c.qa.enabled = s->value.toBool();
        if (!integer(QStringLiteral("qa.lease_ms"), c.qa.leaseMs, 1000, 3600000))
            return error;
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
                                         + QStringLiteral(": qa.peers[%1] \"%2\" is not an http://host:port "
                                                          "base URL")
                                               .arg(i)
                                               .arg(urls.at(i).toString()));
                c.qa.peers.append(text);
            }
        }
        return c;
    }

private:
    const Setting *find(const QString &key) const
    {
        const auto it = m_settings.constFind(key);
        return it == m_settings.constEnd() ? nullptr : &*it;
    }

    QString originOf(const QString &key) const
    {
        const Setting *s = find(key);
        return s ? s->origin : QStringLiteral("default ") + key;
    }

    static bool isHttpUrl(const QString &text)
    {
        const QUrl url(text, QUrl::StrictMode);
        return url.isValid() && (url.scheme() == u"http" || url.scheme() == u"https") && !url.host().isEmpty();
    }

    static bool isInstanceId(const QString &id)
    {
        if (id.isEmpty() || id.size() > 64)
            return false;
        return std::all_of(id.begin(), id.end(), [](QChar ch) {
            return (ch >= u'a' && ch <= u'z') || (ch >= u'A' && ch <= u'Z') || (ch >= u'0' && ch <= u'9') || ch == u'.'
                   || ch == u'_' || ch == u':' || ch == u'-';
        });
    }

    static bool isSha256Hex(const QString &hex)
    {
        return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](QChar ch) {
                   return (ch >= u'0' && ch <= u'9') || (ch >= u'a' && ch <= u'f');
               });
    }

    const QHash<QString, Setting> &m_settings;
};

} // namespace

QString callbackCommitName(CallbackCommit commit)
{
    return commit == CallbackCommit::One ? QStringLiteral("one") : QStringLiteral("accepted_first");
}

QString logFormatName(LogFormat format)
{
    return format == LogFormat::Json ? QStringLiteral("json") : QStringLiteral("text");
}

QString logLevelName(LogLevel level)
{
    switch (level) {
    case LogLevel::Debug: return QStringLiteral("debug");
    case LogLevel::Info: return QStringLiteral("info");
    case LogLevel::Warning: return QStringLiteral("warning");
    }
    Q_UNREACHABLE();
}

Result<LoadResult> loadConfig(const QStringList &arguments, const QProcessEnvironment &environment)
{
    LoadResult result;
    const QString program = arguments.isEmpty() ? QStringLiteral("payonce-agent")
                                                : QFileInfo(arguments.constFirst()).fileName();

    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QString());
    const QCommandLineOption version({QStringLiteral("v"), QStringLiteral("version")}, QString());
    const QCommandLineOption listRoutes(QStringLiteral("list-routes"), QString());
    parser.addOption(help);
    parser.addOption(version);
    parser.addOption(listRoutes);
    for (const OptionSpec &spec : optionTable()) {
        if (!spec.flag.isEmpty())
            parser.addOption(
                QCommandLineOption(spec.flag.toString(), spec.description.toString(), spec.valueName.toString()));
    }
    if (!parser.parse(arguments.isEmpty() ? QStringList{program} : arguments))
        return misconfigured(parser.errorText() + QStringLiteral(" (see --help)"));
    if (!parser.positionalArguments().isEmpty())
        return misconfigured(
            QStringLiteral("unexpected argument \"%1\" (see --help)").arg(parser.positionalArguments().constFirst()));
    if (parser.isSet(help)) {
        result.action = LoadResult::Action::ShowHelp;
        result.text = helpText(program);
        return result;
    }
    if (parser.isSet(version)) {
        result.action = LoadResult::Action::ShowVersion;
        result.text = versionText(program);
        return result;
    }

    Layers layers;
    const OptionSpec *configSpec = findOption(u"config");
    QString configPath = environment.value(envName(*configSpec));
    if (parser.isSet(QStringLiteral("config")))
        configPath = parser.values(QStringLiteral("config")).constLast();
    if (parser.isSet(QStringLiteral("config")) && configPath.isEmpty())
        return misconfigured(QStringLiteral("--config: the file name is empty"));
    if (!configPath.isEmpty()) {
        configPath = QDir::cleanPath(QFileInfo(configPath).absoluteFilePath());
        if (auto r = readConfigFile(configPath, layers); !r)
            return r.error();
        result.config.configFile = configPath;
    }

    for (const OptionSpec &spec : optionTable()) {
        const QString name = envName(spec);
        const QString text = environment.value(name);
        if (text.isEmpty() || spec.kind == OptionKind::ConfigFile)
            continue;
        if (auto r = layers.takeFromText(spec, text, name); !r)
            return r.error();
    }
    for (const OptionSpec &spec : optionTable()) {
        if (spec.flag.isEmpty() || spec.kind == OptionKind::ConfigFile || !parser.isSet(spec.flag.toString()))
            continue;
        const QString text = parser.values(spec.flag.toString()).constLast();
        if (auto r = layers.takeFromText(spec, text, QStringLiteral("--") + spec.flag); !r)
            return r.error();
    }

    auto config = Builder(layers.settings).build();
    if (!config)
        return config.error();
    const QString configFile = result.config.configFile;
    result.config = std::move(config).value();
    result.config.configFile = configFile;
    result.warnings = layers.warnings;
    if (parser.isSet(listRoutes))
        result.action = LoadResult::Action::ListRoutes;
    return result;
}

QString Config::describeForLog() const
{
    auto onOff = [](bool b) { return b ? QStringLiteral("true") : QStringLiteral("false"); };
    auto orNone = [](const QString &s) { return s.isEmpty() ? QStringLiteral("(none)") : s; };
    auto secret = [](const Secret &s) { return s.isEmpty() ? QStringLiteral("(none)") : QStringLiteral("<set>"); };
    auto hostList = [](const QList<HostPort> &list) {
        QStringList parts;
        for (const HostPort &h : list)
            parts << h.toString();
        return parts.join(u',');
    };

    QStringList tokens;
    for (const AuthToken &t : authTokens)
        tokens << t.name + u':' + t.role;
    QStringList serials;
    for (const PlatformKey &k : wechat.platformKeys)
        serials << k.serial + u'=' + k.publicKeyPath;

    QStringList parts{
        QStringLiteral("listen=") + listen.toString(),
        QStringLiteral("public_base_url=")
            + (publicBaseUrl.isEmpty() ? QStringLiteral("(http://listen)") : publicBaseUrl),
        QStringLiteral("db=") + db.redacted(),
        QStringLiteral("redis=") + redis.redacted(),
        QStringLiteral("redis_sentinels=[%1] redis_master_name=%2 redis_sentinel_password=%3")
            .arg(hostList(redisSentinel.sentinels), orNone(redisSentinel.masterName), secret(redisSentinel.password)),
        QStringLiteral("redis_cluster=[%1]").arg(hostList(redisCluster)),
        QStringLiteral("data_dir=") + dataDir,
        QStringLiteral("log_format=") + logFormatName(logFormat),
        QStringLiteral("log_level=") + logLevelName(logLevel),
        QStringLiteral("worker_threads=") + QString::number(workerThreads),
        QStringLiteral("db_connect_timeout_ms=") + QString::number(dbConnectTimeoutMs),
        QStringLiteral("redis_timeout_ms=") + QString::number(redisTimeoutMs),
        QStringLiteral("instances=") + QString::number(instances),
        QStringLiteral("instance_id=") + instanceId,
        QStringLiteral("config_file=") + orNone(configFile),
        QStringLiteral("auth.tokens=[") + tokens.join(u',') + u']',
        QStringLiteral("wechat={mchid=%1 appid=%2 apiv3_key=%3 merchant_private_key=%4 merchant_serial=%5 "
                       "platform_keys=[%6] base_url=%7}")
            .arg(orNone(wechat.mchid), orNone(wechat.appid), secret(wechat.apiv3Key),
                 orNone(wechat.merchantPrivateKeyPath), orNone(wechat.merchantSerial), serials.join(u','),
                 wechat.baseUrl),
        QStringLiteral("alipay={app_id=%1 seller_id=%2 private_key=%3 alipay_public_key=%4 base_url=%5}")
            .arg(orNone(alipay.appId), orNone(alipay.sellerId), orNone(alipay.privateKeyPath),
                 orNone(alipay.alipayPublicKeyPath), alipay.baseUrl),
        QStringLiteral("sim={enabled=%1 listen=%2}").arg(onOff(sim.enabled), sim.listen.toString()),
        QStringLiteral("qa={enabled=%1 lease_ms=%2 peers=[%3] token=%4}")
            .arg(onOff(qa.enabled))
            .arg(qa.leaseMs)
            .arg(qa.peers.join(u','), secret(qa.token)),
        QStringLiteral(
            "http={idle_timeout_ms=%1 header_timeout_ms=%2 max_connections=%3 max_connections_per_address=%4 "
            "max_body_bytes=65536 trusted_proxies=[%5] callback_threads=%6 callback_queue=%7 "
            "gateway_threads=%8 gateway_queue=%9}")
            .arg(http.idleTimeoutMs)
            .arg(http.headerTimeoutMs)
            .arg(http.maxConnections)
            .arg(http.maxConnectionsPerAddress)
            .arg(http.trustedProxies.join(u','))
            .arg(http.callbackThreads)
            .arg(http.callbackQueue)
            .arg(http.gatewayThreads)
            .arg(http.gatewayQueue),
        QStringLiteral("outbox={dispatchers=%1 batch_size=%2 max_attempts=%3 claim_lease_ms=%4 webhook_urls=[%5]}")
            .arg(outbox.dispatchers)
            .arg(outbox.batchSize)
            .arg(outbox.maxAttempts)
            .arg(outbox.claimLeaseMs)
            .arg(outbox.webhookUrls.join(u',')),
        QStringLiteral("patrol={interval_ms=%1 stuck_paying_after_ms=%2 stuck_accepted_after_ms=%3}")
            .arg(patrol.intervalMs)
            .arg(patrol.stuckPayingAfterMs)
            .arg(patrol.stuckAcceptedAfterMs),
        QStringLiteral("close={pending_timeout_ms=%1 interval_ms=%2}")
            .arg(close.pendingTimeoutMs)
            .arg(close.intervalMs),
        QStringLiteral("retention={deliveries_days=%1 callback_log_days=%2 outbox_delivered_days=%3 qa_runs_days=%4 "
                       "batch_size=%5 interval_ms=%6}")
            .arg(retention.deliveriesDays)
            .arg(retention.callbackLogDays)
            .arg(retention.outboxDeliveredDays)
            .arg(retention.qaRunsDays)
            .arg(retention.batchSize)
            .arg(retention.intervalMs),
        QStringLiteral("stream={interval_ms=%1 max_per_token=%2}").arg(stream.intervalMs).arg(stream.maxPerToken),
        QStringLiteral("callbacks={commit=%1}").arg(callbackCommitName(callbacks.commit)),
    };
    return parts.join(u' ');
}

} // namespace payonce::config
