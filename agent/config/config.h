#pragma once

#include "config/databaseurl.h"
#include "config/hostport.h"
#include "config/redisurl.h"
#include "config/secret.h"
#include "core/common/result.h"

#include <QList>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace payonce::config {

enum class LogFormat {
    Text,
    Json
};
enum class LogLevel {
    Debug,
    Info,
    Warning
};

/// One API token: the token itself is never stored, only its SHA-256 (lower-case hex).
struct AuthToken {
    QString name;
    QString role; ///< "viewer", "operator" or "approver"
    Secret sha256;
    bool operator==(const AuthToken &) const = default;
};

/// A trusted WeChat Pay platform public key: the serial the platform names in
/// Wechatpay-Serial, and the PEM file holding the key.
struct PlatformKey {
    QString serial;
    QString publicKeyPath;
    bool operator==(const PlatformKey &) const = default;
};

/// WeChat Pay v3 merchant settings. Key files are paths (not secret); their contents are,
/// and are read by the crypto layer, not here.
struct WeChatSettings {
    QString mchid;
    QString appid;
    Secret apiv3Key;
    QString merchantPrivateKeyPath;
    QString merchantSerial;
    QList<PlatformKey> platformKeys;
    QString baseUrl = QStringLiteral("https://api.mch.weixin.qq.com");
    bool isConfigured() const { return !mchid.isEmpty(); }
    bool operator==(const WeChatSettings &) const = default;
};

struct AlipaySettings {
    QString appId;
    QString sellerId;
    QString privateKeyPath;
    QString alipayPublicKeyPath;
    QString baseUrl = QStringLiteral("https://openapi.alipay.com");
    bool isConfigured() const { return !appId.isEmpty(); }
    bool operator==(const AlipaySettings &) const = default;
};

struct SimSettings {
    bool enabled = false;
    HostPort listen{QStringLiteral("127.0.0.1"), 8090};
    bool operator==(const SimSettings &) const = default;
};

struct QaSettings {
    bool enabled = false;
    int leaseMs = 15000; ///< a run's lease (core::ScenarioRunnerOptions::leaseMs)
    /// The other agents a scenario may target besides this one: http://host:port base
    /// URLs without a trailing slash (loopback only, checked at start).
    QStringList peers;
    /// The bearer token the runner sends with its set-up calls to the targets (its own
    /// credential; a caller's token never leaves the agent). Its SHA-256 must be one of
    /// auth.tokens with role operator on this agent and on every peer (checked at start here).
    Secret token;
    bool operator==(const QaSettings &) const = default;
};

/// The HTTP connection guard (http::ConnectionGuard::Limits). The body limit is not
/// configurable: docs/openapi.yaml fixes it at 64 KiB.
struct HttpSettings {
    int idleTimeoutMs = 60000;   ///< keep-alive / stalled connection closed after this
    int headerTimeoutMs = 10000; ///< a request head must be complete within this
    int maxConnections = 4096;
    int maxConnectionsPerAddress = 256; ///< behind nginx: at least its keepalive + concurrency
    /// Proxies whose X-Forwarded-For names the client: "address/prefix" or an address, as
    /// written (http::TrustedProxies parses them; the agent refuses to start on a bad one).
    /// Empty: every connection is its own client.
    QStringList trustedProxies;
    /// Platform notifications run on threads of their own (http::Lane::Callbacks): at most
    /// callbackThreads at once, callbackQueue more waiting; beyond that 503 / FAIL. The
    /// loader makes the default 1 on SQLite (one writer).
    int callbackThreads = 4;
    int callbackQueue = 256;
    /// Requests that wait on a payment platform (confirm, order close, patrol run,
    /// compensation approval) likewise (http::Lane::Gateway). The queue is deep because a
    /// duplicate storm (100 concurrent confirms of one payment) comes through it too, and
    /// all but one are answered by the duplicate layers in milliseconds.
    int gatewayThreads = 8;
    int gatewayQueue = 512;
    bool operator==(const HttpSettings &) const = default;
};

/// The outbox dispatchers (docs/design.md, "Outbox and patrol"; core::OutboxDispatcherOptions).
struct OutboxSettings {
    int dispatchers = 1;      ///< dispatcher loops in this agent, each on its own thread; 0: none
    int batchSize = 100;      ///< events one dispatcher claims at a time
    int maxAttempts = 10;     ///< failed deliveries before an event is dead
    int claimLeaseMs = 30000; ///< a claim's lease; a dead dispatcher's rows are reclaimed after it
    QStringList webhookUrls;  ///< receivers of "order.paid" (http/https); empty: only logged
    bool operator==(const OutboxSettings &) const = default;
};

/// The reconciliation patrol (core::Patrol): on a timer and on demand.
struct PatrolSettings {
    int intervalMs = 60000;            ///< 0: no timer, only POST /api/v1/reconciliation/run
    int stuckPayingAfterMs = 300000;   ///< a PAYING order older than this is asked at its platform
    int stuckAcceptedAfterMs = 300000; ///< an `accepted` callback row older than this is stuck
    bool operator==(const PatrolSettings &) const = default;
};

/// Order close (core::OrderCloser): PENDING orders past their timeout closed at the platform, then CLOSED.
struct CloseSettings {
    int pendingTimeoutMs = 1800000; ///< a PENDING order unchanged this long is closed; 0: never
    int intervalMs = 60000;         ///< the closer runs this often
    bool operator==(const CloseSettings &) const = default;
};

/// What is deleted after how long (docs/design.md, "Retention"; core::RetentionPruner). Days;
/// 0 keeps for ever. The callback log and the deliveries keep at least 3 days: the
/// platforms re-send a notification for about a day, and its duplicates are caught by them.
struct RetentionSettings {
    int deliveriesDays = 90;      ///< callback_deliveries (raw bodies)
    int callbackLogDays = 180;    ///< pay_callback_log rows processed
    int outboxDeliveredDays = 30; ///< outbox events delivered
    int qaRunsDays = 90;          ///< QA runs that ended
    int batchSize = 1000;         ///< rows one delete takes, one transaction each
    int intervalMs = 600000;      ///< a run this often; 0: never
    bool operator==(const RetentionSettings &) const = default;
};

/// Redis behind Sentinel: where the Sentinels are and the master's name. Empty sentinels:
/// the redis URL's address is the one Redis.
struct RedisSentinelSettings {
    QList<HostPort> sentinels;
    QString masterName;
    Secret password; ///< the Sentinels' own AUTH; empty: none
    bool operator==(const RedisSentinelSettings &) const = default;
};

/// The live stream (GET /api/v1/stream).
struct StreamSettings {
    int intervalMs = 250; ///< a metrics message this often; below 100 only for tests (5 is the floor)
    /// Open streams one token may hold; one more is refused 429 too_many_streams. A
    /// console opens one; a few more leave room for reconnects and a second screen.
    int maxPerToken = 8;
    bool operator==(const StreamSettings &) const = default;
};

/// How a verified notification's callback log row reaches the database (docs/design.md,
/// "Callback path: one commit").
enum class CallbackCommit {
    One,           ///< delivery row, log row and paid transaction in one commit when the pay lock is free
    AcceptedFirst, ///< the log row `accepted` in a commit of its own first, always
};

/// The callback path (core::CallbackPipelineOptions).
struct CallbackSettings {
    CallbackCommit commit = CallbackCommit::One;
    bool operator==(const CallbackSettings &) const = default;
};

/// The agent's whole configuration, valid by construction when it comes out of
/// loadConfig(): every URL parsed, every number in range, every key file present.
/// A plain value: copy it, read it from any thread. Members hold the defaults of docs/configuration.md;
/// the one derived default, db = sqlite:<dataDir>/payonce.db, is applied by loadConfig().
///
/// Secrets live in Secret members and in the password fields of db and redis; nothing
/// this type formats (describeForLog(), DatabaseUrl::redacted(), RedisUrl::redacted(),
/// any error message of the loader) contains them.
struct Config {
    HostPort listen{QStringLiteral("127.0.0.1"), 8080};
    QString publicBaseUrl; ///< empty: http://<listen>; never ends with '/'

    DatabaseUrl db{DatabaseUrl::Dialect::Sqlite, {}, {}, {}, 0, {}, QStringLiteral("./payonce-data/payonce.db")};
    RedisUrl redis;                      ///< embedded by default
    RedisSentinelSettings redisSentinel; ///< set: the master is found through Sentinel
    QList<HostPort> redisCluster;        ///< set: Redis Cluster, reached from these seed nodes
    QString dataDir = QStringLiteral("./payonce-data");
    LogFormat logFormat = LogFormat::Text;
    LogLevel logLevel = LogLevel::Info;
    int dbConnectTimeoutMs = 5000;
    int workerThreads = 8; ///< also the number of database connections
    int redisTimeoutMs = 1000;
    int instances = 1;  ///< agents sharing the database; >1 needs Redis
    QString instanceId; ///< "<hostname>-<pid>" unless configured
    QList<AuthToken> authTokens;
    WeChatSettings wechat;
    AlipaySettings alipay;
    SimSettings sim;
    QaSettings qa;
    HttpSettings http;
    OutboxSettings outbox;
    PatrolSettings patrol;
    CloseSettings close;
    RetentionSettings retention;
    StreamSettings stream;
    CallbackSettings callbacks;
    QString configFile; ///< absolute path of the file read, or empty

    /// One line for the start-up log: every setting, secrets masked ("apiv3_key=<set>",
    /// passwords as "***", token hashes left out).
    QString describeForLog() const;
};

/// What the command line asked for.
struct LoadResult {
    /// ListRoutes: start as Run would, print the routes served instead of serving, exit.
    enum class Action {
        Run,
        ShowHelp,
        ShowVersion,
        ListRoutes
    };
    Action action = Action::Run;
    Config config;        ///< meaningful when action is Run or ListRoutes
    QString text;         ///< the help or version text to print
    QStringList warnings; ///< e.g. unknown keys in the file; log them once logging is up
};

/// Builds the configuration: defaults, then the --config FILE (or PAYONCE_CONFIG), then the
/// PAYONCE_* variables of environment, then the flags in arguments (arguments[0] is the
/// program). Later sources win, per key. Errors are ErrorCode::Misconfigured with a
/// one-line message naming where the bad value came from ("--listen: ...",
/// "PAYONCE_DB: ...", "config file /etc/payonce.json, key \"listen\": ..."). Reads the
/// config file and checks that key files exist; has no other side effects.
core::Result<LoadResult> loadConfig(const QStringList &arguments,
                                    const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment());

QString logFormatName(LogFormat format);
QString logLevelName(LogLevel level);
QString callbackCommitName(CallbackCommit commit);

} // namespace payonce::config
