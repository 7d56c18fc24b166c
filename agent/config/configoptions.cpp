#include "configoptions.h"

#include <QStringList>

#include <algorithm>

#ifndef PAYONCE_VERSION
#error "PAYONCE_VERSION is set by agent/config/CMakeLists.txt"
#endif

namespace payonce::config {

namespace {

using K = OptionKind;

// Keep the key names of docs/configuration.md; new keys may be added, existing ones never renamed.
constexpr OptionSpec kOptions[] = {
    {u"config", u"config", K::ConfigFile, u"FILE", u"",
     u"JSON config file (keys as in docs/configuration.md); relative paths in it are relative to its folder."},
    {u"listen", u"listen", K::String, u"HOST:PORT", u"127.0.0.1:8080",
     u"Address the HTTP API listens on ([::1]:8080 for IPv6)."},
    {u"public_base_url", u"public-base-url", K::String, u"URL", u"http://<listen>",
     u"Where the payment platforms reach this agent: notify URLs are <url>/api/v1/callbacks/<channel>. Behind nginx, "
     u"its public https address."},
    {u"db", u"db", K::Database, u"URL", u"sqlite:<data_dir>/payonce.db",
     u"Database: sqlite:PATH, postgresql://user:pass@host:port/db or mariadb://user:pass@host:port/db."},
    {u"redis", u"redis", K::String, u"URL", u"embedded", u"Key store: \"embedded\" or redis://[:pass@]host:port/db."},
    {u"redis_sentinels", u"", K::HostPortList, u"JSON", u"[]",
     u"Redis Sentinels: [\"10.0.0.5:26379\", ...]. Set, the agent asks them for the master of redis_master_name on "
     u"every (re)connect and follows their failovers; the redis URL then gives only the password and db, its host:port "
     u"are not used."},
    {u"redis_master_name", u"redis-master-name", K::String, u"NAME", u"",
     u"The name the Sentinels monitor the master under (sentinel monitor <name> ...); required with redis_sentinels."},
    {u"redis_sentinel_password", u"", K::Secret, u"PASSWORD", u"",
     u"Password of the Sentinels themselves (requirepass in sentinel.conf); empty: they ask none. Refused by every "
     u"Sentinel (or missing where they ask one), the key store reports a misconfiguration, not an outage."},
    {u"redis_cluster", u"", K::HostPortList, u"JSON", u"[]",
     u"Redis Cluster seed nodes: [\"10.0.0.5:6379\", ...]. Set, the agent learns the slot map from any of them "
     u"(CLUSTER SLOTS), talks to every master, follows MOVED/ASK and failovers; the redis URL then gives only the "
     u"password (db must be 0), its host:port are not used. Not with redis_sentinels."},
    {u"data_dir", u"data-dir", K::Path, u"DIR", u"./payonce-data",
     u"Folder for the agent's own files (the default SQLite database lives here)."},
    {u"log_format", u"log-format", K::String, u"FORMAT", u"text",
     u"Log lines as \"text\" or \"json\" (one JSON object per line)."},
    {u"log_level", u"log-level", K::String, u"LEVEL", u"info",
     u"Lowest level logged: debug, info or warning (QT_LOGGING_RULES still applies)."},
    {u"db_connect_timeout_ms", u"db-connect-timeout-ms", K::Integer, u"MS", u"5000",
     u"Timeout for opening a database connection, in milliseconds."},
    {u"worker_threads", u"worker-threads", K::Integer, u"N", u"8",
     u"Size of the worker pool; each worker holds one database connection and one Redis context."},
    {u"redis_timeout_ms", u"redis-timeout-ms", K::Integer, u"MS", u"1000",
     u"Timeout for connecting to Redis and for each command, in milliseconds."},
    {u"instances", u"instances", K::Integer, u"N", u"1",
     u"How many agents share this database; above 1 the key store must be a shared Redis."},
    {u"instance_id", u"instance-id", K::String, u"NAME", u"<hostname>-<pid>",
     u"This agent's name in locks, logs and the audit trail: 1-64 of [A-Za-z0-9._:-]."},
    {u"http.idle_timeout_ms", u"http-idle-timeout-ms", K::Integer, u"MS", u"60000",
     u"Close a keep-alive connection, or one stalled mid-body, after this many milliseconds without bytes "
     u"(100-3600000)."},
    {u"http.header_timeout_ms", u"http-header-timeout-ms", K::Integer, u"MS", u"10000",
     u"Close a connection whose request head is not complete within this many milliseconds (100-600000)."},
    {u"http.max_connections", u"http-max-connections", K::Integer, u"N", u"4096",
     u"Open HTTP connections at most; more are answered 503 too_many_connections (1-1000000)."},
    {u"http.max_connections_per_address", u"http-max-connections-per-address", K::Integer, u"N", u"256",
     u"Open HTTP connections per client address at most (1-1000000); behind nginx all clients share its address."},
    {u"http.callback_threads", u"http-callback-threads", K::Integer, u"N", u"4",
     u"Threads that answer platform notifications, apart from every other request (1-256). With SQLite the default is "
     u"1: it has one writer, and more threads only wait on each other."},
    {u"http.callback_queue", u"http-callback-queue", K::Integer, u"N", u"256",
     u"Notifications that may wait for those threads (0-100000); more are answered 503 with the platform's FAIL, so it "
     u"sends them again."},
    {u"http.gateway_threads", u"http-gateway-threads", K::Integer, u"N", u"8",
     u"Threads for requests that wait on a payment platform: confirm, order close, patrol run, compensation approval "
     u"(1-256)."},
    {u"http.gateway_queue", u"http-gateway-queue", K::Integer, u"N", u"512",
     u"Such requests that may wait for those threads (0-100000); more are answered 503 server_busy with Retry-After."},
    {u"http.trusted_proxies", u"", K::SubnetList, u"JSON", u"[]",
     u"Proxies whose X-Forwarded-For names the client: [\"127.0.0.1/32\"] (subnets or single addresses). The client is "
     u"the rightmost hop that is not one of them; it is what the failed-authentication limiter counts. Empty: every "
     u"connection's own address is its client."},
    {u"callbacks.commit", u"callbacks-commit", K::String, u"PATH", u"one",
     u"How a verified, new notification is written: \"one\" commits its delivery row, its callback log row and the "
     u"paid transaction together when its pay lock is free (else, and in accept-only mode, the accepted-first way); "
     u"\"accepted_first\" always makes the log row durable in a commit of its own before paying (four commits per "
     u"notification instead of one)."},
    {u"outbox.dispatchers", u"outbox-dispatchers", K::Integer, u"N", u"1",
     u"Outbox dispatcher loops in this agent, each on its own thread (0-16; 0: this agent delivers no events)."},
    {u"outbox.batch_size", u"outbox-batch-size", K::Integer, u"N", u"100",
     u"Outbox events a dispatcher claims at a time (1-1000)."},
    {u"outbox.max_attempts", u"outbox-max-attempts", K::Integer, u"N", u"10",
     u"Failed deliveries after which an outbox event is dead (1-1000); POST /api/v1/outbox/{id}/redrive revives it."},
    {u"outbox.claim_lease_ms", u"outbox-claim-lease-ms", K::Integer, u"MS", u"30000",
     u"How long a dispatcher's claim on a batch holds; the events of a dispatcher that died are claimed again after it "
     u"(2000-3600000)."},
    {u"outbox.webhook_urls", u"", K::UrlList, u"JSON", u"[]",
     u"Receivers of order.paid events: [\"https://...\"]; each gets every event POSTed with Idempotency-Key: "
     u"<event_id>. Empty: events are only logged."},
    {u"patrol.interval_ms", u"patrol-interval-ms", K::Integer, u"MS", u"60000",
     u"Run the reconciliation patrol this often (0-86400000; 0: only on POST /api/v1/reconciliation/run)."},
    {u"patrol.stuck_paying_after_ms", u"patrol-stuck-paying-after-ms", K::Integer, u"MS", u"300000",
     u"A PAYING order older than this counts as stuck for the patrol (1000-86400000)."},
    {u"patrol.stuck_accepted_after_ms", u"patrol-stuck-accepted-after-ms", K::Integer, u"MS", u"300000",
     u"An accepted callback row older than this counts as stuck for the patrol (1000-86400000)."},
    {u"close.pending_timeout_ms", u"close-pending-timeout-ms", K::Integer, u"MS", u"1800000",
     u"Close a PENDING order unchanged for this long: its trades are closed at the platform, then the order is CLOSED "
     u"(0-604800000; 0: never)."},
    {u"close.interval_ms", u"close-interval-ms", K::Integer, u"MS", u"60000",
     u"Look for PENDING orders past close.pending_timeout_ms this often (100-86400000)."},
    {u"retention.deliveries_days", u"retention-deliveries-days", K::Integer, u"DAYS", u"90",
     u"Delete callback deliveries (their raw bodies) older than this, never an accepted row's (0 or 3-36500; 0: keep "
     u"for ever)."},
    {u"retention.callback_log_days", u"retention-callback-log-days", K::Integer, u"DAYS", u"180",
     u"Delete processed callback log rows older than this, never accepted ones (0 or 3-36500; 0: keep for ever)."},
    {u"retention.outbox_delivered_days", u"retention-outbox-delivered-days", K::Integer, u"DAYS", u"30",
     u"Delete delivered outbox events older than this; pending and dead ones stay (0-36500; 0: keep for ever)."},
    {u"retention.qa_runs_days", u"retention-qa-runs-days", K::Integer, u"DAYS", u"90",
     u"Delete QA runs that ended longer ago than this (0-36500; 0: keep for ever)."},
    {u"retention.batch_size", u"retention-batch-size", K::Integer, u"N", u"1000",
     u"Rows one retention delete takes, each batch its own transaction (1-100000)."},
    {u"retention.interval_ms", u"retention-interval-ms", K::Integer, u"MS", u"600000",
     u"Run retention this often (0-86400000; 0: never)."},
    {u"stream.interval_ms", u"stream-interval-ms", K::Integer, u"MS", u"250",
     u"GET /api/v1/stream sends a metrics message this often (5-60000; below 100 only for tests)."},
    {u"stream.max_per_token", u"stream-max-per-token", K::Integer, u"N", u"8",
     u"Open streams one token may hold (1-1000); one more is refused 429 too_many_streams. Applied on SIGHUP."},
    {u"auth.tokens", u"", K::AuthTokens, u"JSON", u"[]",
     u"API tokens: [{\"name\",\"role\":\"viewer|operator|approver\",\"sha256\":\"<hex of the token>\"}]."},
    {u"wechat.mchid", u"", K::String, u"ID", u"", u"WeChat Pay merchant id."},
    {u"wechat.appid", u"", K::String, u"ID", u"", u"WeChat app id."},
    {u"wechat.apiv3_key", u"", K::Secret, u"KEY", u"", u"WeChat Pay APIv3 key (32 ASCII bytes)."},
    {u"wechat.merchant_private_key", u"", K::Path, u"FILE", u"", u"Merchant private key (PEM file)."},
    {u"wechat.merchant_serial", u"", K::String, u"SERIAL", u"", u"Merchant certificate serial number."},
    {u"wechat.platform_keys", u"", K::PlatformKeys, u"JSON", u"[]",
     u"Trusted platform public keys: [{\"serial\",\"public_key\":\"<PEM file>\"}]."},
    {u"wechat.base_url", u"", K::String, u"URL", u"https://api.mch.weixin.qq.com", u"WeChat Pay API base URL."},
    {u"alipay.app_id", u"", K::String, u"ID", u"", u"Alipay app id."},
    {u"alipay.seller_id", u"", K::String, u"ID", u"", u"Alipay seller id."},
    {u"alipay.private_key", u"", K::Path, u"FILE", u"",
     u"App private key (PEM file, or bare base64 as Alipay's key tool gives it)."},
    {u"alipay.alipay_public_key", u"", K::Path, u"FILE", u"",
     u"Alipay public key (PEM file, or bare base64 as Alipay's console gives it)."},
    {u"alipay.base_url", u"", K::String, u"URL", u"https://openapi.alipay.com", u"Alipay API base URL."},
    {u"sim.enabled", u"", K::Boolean, u"BOOL", u"false",
     u"Start payonce-sim as a child process and point the gateways at it."},
    {u"sim.listen", u"", K::String, u"HOST:PORT", u"127.0.0.1:8090", u"Address of the started payonce-sim."},
    {u"qa.enabled", u"", K::Boolean, u"BOOL", u"false", u"Allow POST /api/v1/qa/scenarios."},
    {u"qa.lease_ms", u"", K::Integer, u"MS", u"15000",
     u"A QA run's lease, renewed by its agent every third of it: a run whose agent died is shown abandoned, on every "
     u"agent, once its lease has run out (1000-3600000)."},
    {u"qa.token", u"", K::Secret, u"TOKEN", u"",
     u"The bearer token QA runs send to their targets (this agent and qa.peers), never the caller's: its SHA-256 must "
     u"be one of auth.tokens with role operator here and on every peer. Required with qa.enabled."},
    {u"qa.peers", u"", K::UrlList, u"JSON", u"[]",
     u"Other agents a QA scenario may target besides this one: [\"http://127.0.0.1:8081\"] (http://host:port on a "
     u"loopback address). A target neither this agent nor listed here is refused 400 qa_target_not_allowed."},
};

QString wrapped(const QString &text, int indent, int width)
{
    const QStringList words = text.split(u' ', Qt::SkipEmptyParts);
    QString out;
    int column = indent;
    for (const QString &word : words) {
        if (column > indent && column + 1 + word.size() > width) {
            out += u'\n' + QString(indent, u' ');
            column = indent;
        } else if (column > indent) {
            out += u' ';
            ++column;
        }
        out += word;
        column += int(word.size());
    }
    return out;
}

// The left column of --help, padded to indent; a name too long for it gets a line of its own.
QString column(const QString &left, int indent)
{
    if (left.size() < indent)
        return left.leftJustified(indent);
    return left + u'\n' + QString(indent, u' ');
}

// The config file's key, for every setting that is one (--config names the file itself).
QString keyNote(const OptionSpec &o)
{
    return o.kind == K::ConfigFile ? QString() : QStringLiteral(" Key: ") + o.key + u'.';
}

QString defaultNote(const OptionSpec &o)
{
    if (o.kind == K::Secret || o.kind == K::ConfigFile)
        return QString();
    return QStringLiteral(" Default: ")
           + (o.defaultText.isEmpty() ? QStringLiteral("(none)") : o.defaultText.toString()) + u'.';
}

} // namespace

std::span<const OptionSpec> optionTable()
{
    return kOptions;
}

const OptionSpec *findOption(QStringView key)
{
    const auto it = std::find_if(std::begin(kOptions), std::end(kOptions),
                                 [key](const OptionSpec &o) { return o.key == key; });
    return it == std::end(kOptions) ? nullptr : &*it;
}

QString envName(const OptionSpec &option)
{
    QString name = QStringLiteral("PAYONCE_") + option.key.toString().toUpper();
    name.replace(u'.', u'_');
    return name;
}

QString helpText(const QString &programName)
{
    constexpr int indent = 32;
    constexpr int width = 100;
    QString out = QStringLiteral("Usage: ") + programName + QStringLiteral(" [options]\n\n");
    out += wrapped(QStringLiteral("Settings come from, in this order (a later source wins): built-in defaults, "
                                  "the --config FILE (JSON), PAYONCE_* environment variables, flags. An empty "
                                  "environment variable counts as unset. Secrets (tokens, keys, passwords) belong "
                                  "in the config file or the environment, never in flags: flags show in ps."),
                   0, width);
    out += QStringLiteral("\n\nOptions:\n");
    for (const OptionSpec &o : kOptions) {
        if (o.flag.isEmpty())
            continue;
        out += column(QStringLiteral("  --") + o.flag + u' ' + o.valueName, indent)
               + wrapped(o.description.toString() + keyNote(o) + QStringLiteral(" Env: ") + envName(o) + u'.'
                             + defaultNote(o),
                         indent, width)
               + u'\n';
    }
    out += QStringLiteral("  -h, --help").leftJustified(indent) + QStringLiteral("Show this help and exit.\n");
    out += QStringLiteral("  -v, --version").leftJustified(indent) + QStringLiteral("Show the version and exit.\n");
    out += QStringLiteral("  --list-routes").leftJustified(indent)
           + wrapped(QStringLiteral("Start with these settings, print every HTTP route served (method, path, role; "
                                    "qa.enabled adds the QA routes) instead of serving, and exit."),
                     indent, width)
           + u'\n';

    out += QStringLiteral("\nEnvironment only (or the config file key shown):\n");
    for (const OptionSpec &o : kOptions) {
        if (!o.flag.isEmpty())
            continue;
        out += column(QStringLiteral("  ") + envName(o), indent)
               + wrapped(o.description.toString() + keyNote(o) + defaultNote(o), indent, width) + u'\n';
    }
    return out;
}

QString versionText(const QString &programName)
{
    return programName + u' ' + QStringLiteral(PAYONCE_VERSION) + u'\n';
}

} // namespace payonce::config
