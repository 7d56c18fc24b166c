#include "rediskeystore.h"

#include "boundedseenset.h"
#include "clusterslots.h"
#include "hashslot.h"
#include "hiredisclient.h"
#include "leasewatchdog.h"
#include "randombytes.h"
#include "sentinelmaster.h"

#include <QCryptographicHash>
#include <QHash>
#include <QLoggingCategory>
#include <QSet>

#include <hiredis/hiredis.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <poll.h>
#include <vector>

namespace payonce::redis {

Q_LOGGING_CATEGORY(lcRedis, "payonce.agent.redis")

using core::Error;
using core::ErrorCode;
using core::Result;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// ---------------------------------------------------------------------------------------
// Replies and scripts

struct Reply {
    enum class Type {
        Nil,
        Integer,
        String,
        Status,
        Error,
        Array
    };
    Type type = Type::Nil;
    long long integer = 0;
    QByteArray text;
    std::vector<Reply> elements;

    static Reply from(const redisReply *reply)
    {
        Reply result;
        switch (reply->type) {
        case REDIS_REPLY_INTEGER:
            result.type = Type::Integer;
            result.integer = reply->integer;
            break;
        case REDIS_REPLY_STRING:
            result.type = Type::String;
            result.text = QByteArray(reply->str, static_cast<qsizetype>(reply->len));
            break;
        case REDIS_REPLY_STATUS:
            result.type = Type::Status;
            result.text = QByteArray(reply->str, static_cast<qsizetype>(reply->len));
            break;
        case REDIS_REPLY_ERROR:
            result.type = Type::Error;
            result.text = QByteArray(reply->str, static_cast<qsizetype>(reply->len));
            break;
        case REDIS_REPLY_ARRAY:
            result.type = Type::Array;
            for (size_t i = 0; i < reply->elements; ++i)
                result.elements.push_back(from(reply->element[i]));
            break;
        default: result.type = Type::Nil; break;
        }
        return result;
    }

    bool isError() const { return type == Type::Error; }
    QString errorText() const { return QString::fromUtf8(text); }
};

struct Script {
    const char *name;
    QByteArray source;
    QByteArray sha;
};

Script makeScript(const char *name, const char *source)
{
    const QByteArray bytes(source);
    return Script{name, bytes, QCryptographicHash::hash(bytes, QCryptographicHash::Sha1).toHex()};
}

// Compare-and-delete: the token consume and the lock release.
const Script &compareAndDeleteScript()
{
    static const Script script = makeScript(
        "compare_and_delete",
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0");
    return script;
}

// Owner-checked lease extension.
const Script &renewScript()
{
    static const Script script = makeScript(
        "renew", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
                 "return 0");
    return script;
}

// The instance's fence state, one hash: `epoch` (handed out by the database), `counter`
// (every token of the instance, whatever its scope), `run_id` (the process that installed
// the epoch). One key, so it is lost whole or not at all: a lost counter is a lost epoch,
// never a counter restarting inside an epoch.
const QByteArray &fenceStateKey()
{
    static const QByteArray key = QByteArrayLiteral("fence:state");
    return key;
}

/// Where a fenced lock and its fence state live. In cluster mode both carry the hash tag of
/// the slot of their fence scope (the order), so one script can take both, and every lock
/// fencing one order — the confirm's and the callback's — draws from the same state: per
/// slot, `fence:state:{tag}`, and the lock as `{tag}lock:…`. Otherwise the lock as named
/// and the instance's one state.
struct FencePlacement {
    QByteArray lockKey;
    QByteArray stateKey;
    int slot = 0;       ///< the hash slot the command goes to (cluster mode)
    int floorIndex = 0; ///< which of the store's floors the tokens count against
};

FencePlacement placeFence(bool cluster, const QString &lockKey, const QString &fenceScope)
{
    FencePlacement placement{lockKey.toUtf8(), fenceStateKey(), 0, 0};
    if (!cluster)
        return placement;
    if (fenceScope.isEmpty()) {
        placement.slot = hashSlot(placement.lockKey);
        return placement;
    }
    const int slot = hashSlot(fenceScope.toUtf8());
    const QByteArray tag = '{' + tagForSlot(slot) + '}';
    placement.lockKey = tag + placement.lockKey;
    placement.stateKey = fenceStateKey() + ':' + tag;
    placement.slot = slot;
    placement.floorIndex = slot;
    return placement;
}

/// The logical name of a stored lock key: a cluster's leading "{tag}" taken off.
QString logicalLockKey(const QByteArray &stored)
{
    if (stored.startsWith('{')) {
        const qsizetype close = stored.indexOf('}');
        if (close > 0)
            return QString::fromUtf8(stored.mid(close + 1));
    }
    return QString::fromUtf8(stored);
}

bool isLockKey(const QByteArray &stored)
{
    return logicalLockKey(stored).startsWith(QLatin1String("lock:"));
}

// Shared by the fencing scripts, which declare `epoch` and `counter` first and get them set
// here (KEYS[n] = the fence state; ARGV[3], ARGV[4] = the largest
// token this agent has seen, epoch and counter; ARGV[5] = the run_id of the node, in
// cluster mode, else empty): refuses, before anything is written, an instance without
// fence state, state installed by another process (cluster mode: a slot whose state was
// replicated to a promoted replica — single and Sentinel modes check this once per
// connection instead), a full counter, or state that went back below a token this agent
// already has (restored from an older snapshot). The caller installs a new epoch and runs
// the script again.
#define PAYONCE_FENCE_CHECK(stateKey)                                                                                  \
    "local state = redis.call('HMGET', " stateKey ", 'epoch', 'counter', 'run_id') "                                   \
    "if not state[1] then return redis.error_reply('FENCE_NO_STATE no fence state') end "                              \
    "if ARGV[5] and ARGV[5] ~= '' and state[3] ~= ARGV[5] then "                                                       \
    "return redis.error_reply('FENCE_OTHER_RUN installed by another process') end "                                    \
    "epoch, counter = tonumber(state[1]), tonumber(state[2] or '0') "                                                  \
    "if counter >= 4294967295 then return redis.error_reply('FENCE_FULL the counter is full') end "                    \
    "local floorEpoch, floorCounter = tonumber(ARGV[3]), tonumber(ARGV[4]) "                                           \
    "if epoch < floorEpoch or (epoch == floorEpoch and counter < floorCounter) then "                                  \
    "return redis.error_reply('FENCE_BEHIND below a token already handed out') end "

// The lock and its fencing token in one step: SET NX PX, and only if that won, the next
// token of the instance (KEYS[2], the fence state, when a fence scope was given).
// Returns {epoch, counter}, 0 when won without a fence scope, nil when the lock is held by
// someone else. One step, so a holder paused after winning cannot take a token above a
// successor's.
const Script &acquireScript()
{
    static const Script script = makeScript(
        "acquire",
        "local epoch, counter = 0, 0 "
        "if #KEYS > 1 then " PAYONCE_FENCE_CHECK(
            "KEYS[2]") "end "
                       "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end "
                       "if #KEYS > 1 then return {epoch, redis.call('HINCRBY', KEYS[2], 'counter', 1)} end "
                       "return 0");
    return script;
}

// The next token without a lock: {epoch, counter} (ARGV[1], ARGV[2] unused).
const Script &nextTokenScript()
{
    static const Script script = makeScript(
        "next_token", "local epoch, counter = 0, 0 " PAYONCE_FENCE_CHECK(
                          "KEYS[1]") "return {epoch, redis.call('HINCRBY', KEYS[1], 'counter', 1)}");
    return script;
}

#undef PAYONCE_FENCE_CHECK

// Installs a new epoch (ARGV[1], from the database) with its counter at 0 for run_id
// ARGV[2], unless another agent installed a larger one meanwhile. Returns the epoch in
// force. Run with EVAL: it is needed in the handshake, before the scripts are loaded.
const char *const installEpochScript =
    "local current = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0') "
    "if current < tonumber(ARGV[1]) then "
    "redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'counter', 0, 'run_id', ARGV[2]) return tonumber(ARGV[1]) end "
    "return current";

// The L1 cache entry: fingerprint and response, with one expiry.
const Script &putResponseScript()
{
    static const Script script = makeScript(
        "put_response", "redis.call('DEL', KEYS[1]) redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'body', ARGV[2]) "
                        "redis.call('PEXPIRE', KEYS[1], ARGV[3]) return 1");
    return script;
}

const std::vector<const Script *> &allScripts()
{
    static const std::vector<const Script *> scripts{&compareAndDeleteScript(), &renewScript(), &acquireScript(),
                                                     &nextTokenScript(), &putResponseScript()};
    return scripts;
}

QByteArray msText(milliseconds duration)
{
    return QByteArray::number(static_cast<qlonglong>(duration.count()));
}

std::atomic<quint64> g_nextBackendId{1}; // identifies backends for the per-thread connection table

} // namespace

// ---------------------------------------------------------------------------------------
// Backend: what all connections of one store share

struct Backend {
    Backend(const RedisOptions &opts, core::FenceEpochSource &source)
        : options(opts), epochs(source), id(g_nextBackendId.fetch_add(1)),
          sentinel(opts.sentinelMode() ? std::make_unique<SentinelMaster>(opts) : nullptr),
          cluster(opts.clusterMode() ? std::make_unique<ClusterSlotMap>(opts) : nullptr),
          m_floorCount(opts.clusterMode() ? size_t(kClusterSlots) : 1),
          m_floors(new std::atomic<quint64>[m_floorCount]())
    {
    }

    const RedisOptions options;
    core::FenceEpochSource &epochs;
    const quint64 id;
    /// Sentinel mode: where the master is now. Null otherwise.
    const std::unique_ptr<SentinelMaster> sentinel;
    /// Cluster mode: which master serves each slot. Null otherwise.
    const std::unique_ptr<ClusterSlotMap> cluster;

    /// The node connections go to: the configured address, or the master a Sentinel names.
    /// (Cluster connections are opened to one node each.)
    Result<config::HostPort> target() const
    {
        if (sentinel)
            return sentinel->resolve();
        return config::HostPort{options.host, options.port};
    }

    /// For messages: "host:port/db", in Sentinel mode with the master's name and address, in
    /// cluster mode the seeds.
    QString endpoint() const
    {
        if (!sentinel)
            return options.endpoint();
        const auto master = sentinel->current();
        return QStringLiteral("%1/%2 (master \"%3\")")
            .arg(master ? master->toString() : QStringLiteral("(no master known)"))
            .arg(options.database)
            .arg(options.masterName);
    }
    std::atomic<bool> closed{false};
    std::atomic<bool> degraded{false};
    /// The fence epoch in force on the instance last connected to; in cluster mode the
    /// largest in force on any slot met (for topology()).
    std::atomic<quint64> epochInForce{0};
    /// Held while a connection checks (and if need be installs) the instance's fence epoch.
    std::timed_mutex epochCheck;

    void noteEpoch(quint64 epoch)
    {
        if (!cluster) {
            epochInForce.store(epoch);
            return;
        }
        quint64 seen = epochInForce.load();
        while (epoch > seen && !epochInForce.compare_exchange_weak(seen, epoch)) {
        }
    }

    /// The master-change count that ends a backoff (Sentinel and cluster modes).
    quint64 topologyGeneration() const
    {
        if (sentinel)
            return sentinel->generation();
        if (cluster)
            return cluster->generation();
        return 0;
    }

    /// Before a connect to `node` (its "host:port"; empty outside cluster mode: one backoff
    /// for the store): an Error if we are inside the backoff after a failed connect.
    std::optional<Error> backoffGate(const QString &node)
    {
        std::lock_guard lock(m_mutex);
        const auto found = m_backoffs.constFind(node);
        if (found == m_backoffs.constEnd())
            return std::nullopt;
        const auto now = Clock::now();
        if (now >= found->nextConnectAt)
            return std::nullopt;
        // A new master since the failed connect ends the backoff — the connects failed
        // against the old one; the new one is worth trying at once.
        if (topologyGeneration() != found->failedAtGeneration)
            return std::nullopt;
        const auto left = std::chrono::duration_cast<milliseconds>(found->nextConnectAt - now);
        Error error = found->lastError;
        error.internalMessage += QStringLiteral(" (next attempt in %1 ms)").arg(left.count());
        return error;
    }

    void connectFailed(const QString &node, const Error &error)
    {
        degraded.store(true);
        {
            std::lock_guard lock(m_mutex);
            Backoff &backoff = m_backoffs[node];
            backoff.backoff = backoff.backoff.count() == 0 ? options.minBackoff
                                                           : std::min(backoff.backoff * 2, options.maxBackoff);
            backoff.nextConnectAt = Clock::now() + backoff.backoff;
            backoff.lastError = error;
            backoff.failedAtGeneration = topologyGeneration();
        }
        if (cluster) // a master that cannot be reached may have been failed over
            cluster->refreshSoon();
    }

    /// Returns true when this run_id was never seen by this store (scripts to load).
    bool connected(const QString &node, const QString &runId)
    {
        std::lock_guard lock(m_mutex);
        m_backoffs.remove(node);
        if (m_lastRunId != runId) {
            if (!m_lastRunId.isEmpty() && !cluster)
                qCInfo(lcRedis).noquote() << QStringLiteral("Redis at %1 is a new instance: run_id %2 (was %3)")
                                                 .arg(endpoint(), runId, m_lastRunId);
            m_lastRunId = runId;
        }
        return !m_scriptsLoadedFor.contains(runId);
    }

    /// True until the eviction policy of this run_id was checked (policyChecked()).
    bool policyToCheck(const QString &runId) const
    {
        std::lock_guard lock(m_mutex);
        return !m_policyCheckedFor.contains(runId);
    }

    void policyChecked(const QString &runId)
    {
        std::lock_guard lock(m_mutex);
        m_policyCheckedFor.insert(runId);
    }

    void scriptsLoaded(const QString &runId)
    {
        std::lock_guard lock(m_mutex);
        m_scriptsLoadedFor.insert(runId);
    }

    QString lastRunId() const
    {
        std::lock_guard lock(m_mutex);
        return m_lastRunId;
    }

    /// The largest token this store has handed out from one fence state (index 0; in
    /// cluster mode one per slot, whose states have epochs of their own): the floor every
    /// later one from that state must pass.
    quint64 highestToken(int floorIndex) const { return m_floors[size_t(floorIndex) % m_floorCount].load(); }
    void sawToken(int floorIndex, quint64 token)
    {
        std::atomic<quint64> &floor = m_floors[size_t(floorIndex) % m_floorCount];
        quint64 seen = floor.load();
        while (token > seen && !floor.compare_exchange_weak(seen, token)) {
        }
    }

    Error unavailable(const QString &what) const
    {
        return Error::make(ErrorCode::Unavailable, QStringLiteral("Redis at %1: %2").arg(endpoint(), what),
                           QStringLiteral("the key store is unavailable"));
    }

private:
    struct Backoff {
        Clock::time_point nextConnectAt;
        milliseconds backoff{0};
        Error lastError;
        quint64 failedAtGeneration = 0; ///< the topology's generation at the failed connect
    };

    mutable std::mutex m_mutex;
    QHash<QString, Backoff> m_backoffs; ///< by node ("" outside cluster mode)
    QString m_lastRunId;
    QSet<QString> m_scriptsLoadedFor;
    QSet<QString> m_policyCheckedFor;
    const size_t m_floorCount;
    const std::unique_ptr<std::atomic<quint64>[]> m_floors;
};

// ---------------------------------------------------------------------------------------
// Connection: one hiredis context, used by one thread only

namespace {

enum class Retry {
    No,
    OnStaleConnection
};

class Connection {
public:
    /// `node`: cluster mode, the one node this connection talks to; otherwise none (the
    /// configured address or the master a Sentinel names, looked up on each connect).
    Connection(std::shared_ptr<Backend> backend, std::optional<config::HostPort> node)
        : m_backend(std::move(backend)), m_fixedNode(std::move(node))
    {
    }
    ~Connection() { drop(); }
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    const std::shared_ptr<Backend> &backend() const { return m_backend; }
    /// The run_id of the instance this connection is talking to (set by the handshake).
    QString runId() const { return m_runId; }
    /// Where this connection goes (its fixed node in cluster mode, else the node reached last).
    config::HostPort node() const { return m_fixedNode ? *m_fixedNode : m_node; }
    const std::optional<config::HostPort> &fixedNode() const { return m_fixedNode; }

    /// Opens the connection (with its handshake) unless it is open; what a command does first.
    Result<void> open() { return ensureConnected(); }

    /// Runs one command. Error replies come back as Reply::Type::Error. With
    /// Retry::OnStaleConnection, a command that failed on a connection opened by an
    /// earlier call (the server went away since) is sent once more on a fresh one — only
    /// for commands that are safe to repeat.
    Result<Reply> command(const std::vector<QByteArray> &args, Retry retry)
    {
        for (int attempt = 0;; ++attempt) {
            const bool reused = m_context != nullptr;
            if (auto connected = ensureConnected(); !connected.ok())
                return connected.error();
            auto reply = send(args);
            if (reply.ok() && reply->isError() && reply->text.startsWith("READONLY") && m_backend->sentinel) {
                // A replica refused the write, so nothing was written: this node is no
                // longer the master. Every connection asks the Sentinels again; this
                // command goes once more to the master they name.
                m_backend->sentinel->markNotMaster(m_node);
                drop();
                if (attempt == 0)
                    continue;
            }
            if (reply.ok()) {
                // An answer is not yet a success: a refusal that means "unavailable"
                // (LOADING, READONLY, OOM…) or "misconfigured" degrades the store like a
                // dead server; only a successful reply clears it. Other error replies
                // (NOSCRIPT, a bug of ours) say nothing about the store's health.
                if (!reply->isError())
                    m_backend->degraded.store(false);
                else if (const ErrorCode code = classify(reply->errorText());
                         code == ErrorCode::Unavailable || code == ErrorCode::Misconfigured)
                    m_backend->degraded.store(true);
                return reply;
            }
            m_backend->degraded.store(true);
            if (m_backend->cluster) // the node went away: it may have been failed over
                m_backend->cluster->refreshSoon();
            if (retry == Retry::OnStaleConnection && reused && attempt == 0 && !m_lastWasTimeout)
                continue;
            return reply;
        }
    }

    /// EVALSHA, and on NOSCRIPT: SCRIPT LOAD and EVALSHA once more.
    Result<Reply> eval(const Script &script, const std::vector<QByteArray> &keys, const std::vector<QByteArray> &args,
                       Retry retry)
    {
        std::vector<QByteArray> command{QByteArrayLiteral("EVALSHA"), script.sha,
                                        QByteArray::number(static_cast<qulonglong>(keys.size()))};
        command.insert(command.end(), keys.begin(), keys.end());
        command.insert(command.end(), args.begin(), args.end());
        auto reply = this->command(command, retry);
        if (reply.ok() && reply->isError() && reply->text.startsWith("NOSCRIPT")) {
            qCInfo(lcRedis) << "script" << script.name << "not in the script cache; loading it again";
            auto loaded = this->command({QByteArrayLiteral("SCRIPT"), QByteArrayLiteral("LOAD"), script.source},
                                        Retry::No);
            if (!loaded.ok())
                return loaded.error();
            if (loaded->isError())
                return replyError(QStringLiteral("SCRIPT LOAD %1").arg(QLatin1String(script.name)), *loaded);
            reply = this->command(command, Retry::No);
        }
        if (reply.ok() && reply->isError() && !isFenceRefusal(*reply) && !isRedirect(*reply))
            return replyError(QStringLiteral("script %1").arg(QLatin1String(script.name)), *reply);
        return reply;
    }

    /// MOVED or ASK: the slot is served elsewhere; the command was not run (cluster mode).
    static bool isRedirect(const Reply &reply)
    {
        return reply.isError() && (reply.text.startsWith("MOVED ") || reply.text.startsWith("ASK "));
    }

    /// A fencing script (acquire with a fence scope, next token; the fence state is the last
    /// key, `args` end with the floor): when it refuses because the fence state cannot be
    /// trusted (none, another process's, full counter, behind a token this store already
    /// has), a new epoch is installed and the script runs once more — it wrote nothing when
    /// it refused, so running it again is safe even for the acquire. In cluster mode the
    /// script is given this node's run_id to check the slot's state against.
    Result<Reply> fenced(const Script &script, const std::vector<QByteArray> &keys, const std::vector<QByteArray> &args,
                         Retry retry)
    {
        if (auto opened = open(); !opened.ok())
            return opened.error();
        const auto withRunId = [&] {
            std::vector<QByteArray> all = args;
            all.push_back(m_backend->cluster ? m_runId.toLatin1() : QByteArray());
            return all;
        };
        auto reply = eval(script, keys, withRunId(), retry);
        if (!reply.ok() || !isFenceRefusal(*reply))
            return reply;
        // The store's connections that meet state to replace together do it one at a time
        // (waited for at most a command timeout): the first installs an epoch, the others
        // find it installed when they run the script again.
        std::unique_lock serialised(m_backend->epochCheck, std::defer_lock);
        (void)serialised.try_lock_for(m_backend->options.commandTimeout);
        reply = eval(script, keys, withRunId(), Retry::No);
        if (!reply.ok() || !isFenceRefusal(*reply))
            return reply;
        static const QHash<QByteArray, QString> reasons{
            {QByteArrayLiteral("FENCE_NO_STATE"), QStringLiteral("no_fence_state")},
            {QByteArrayLiteral("FENCE_OTHER_RUN"), QStringLiteral("other_run_id")},
            {QByteArrayLiteral("FENCE_FULL"), QStringLiteral("counter_full")},
            {QByteArrayLiteral("FENCE_BEHIND"), QStringLiteral("behind_this_agent")}};
        if (auto installed = installEpoch(m_runId, reasons.value(fenceRefusal(*reply), QStringLiteral("refused")),
                                          keys.back());
            !installed.ok())
            return installed.error();
        reply = eval(script, keys, withRunId(), Retry::No);
        if (reply.ok() && isFenceRefusal(*reply))
            return replyError(QStringLiteral("script %1 after a new fence epoch").arg(QLatin1String(script.name)),
                              *reply);
        return reply;
    }

    static bool isFenceRefusal(const Reply &reply) { return reply.isError() && !fenceRefusal(reply).isEmpty(); }
    /// FENCE_NO_STATE, FENCE_FULL, FENCE_BEHIND; empty for any other reply.
    static QByteArray fenceRefusal(const Reply &reply)
    {
        QByteArray text = reply.text;
        if (text.startsWith("ERR "))
            text = text.mid(4);
        return text.startsWith("FENCE_") ? text.left(text.indexOf(' ')) : QByteArray();
    }

    /// What an error reply means: Misconfigured (credentials), Unavailable (the server
    /// refuses for now: loading, read-only replica, out of memory, a cluster with slots
    /// nobody serves…) or Internal.
    static ErrorCode classify(const QString &text)
    {
        if (text.startsWith(QLatin1String("NOAUTH")) || text.startsWith(QLatin1String("WRONGPASS"))
            || text.contains(QLatin1String("invalid password")))
            return ErrorCode::Misconfigured;
        if (text.startsWith(QLatin1String("LOADING")) || text.startsWith(QLatin1String("BUSY"))
            || text.startsWith(QLatin1String("READONLY")) || text.startsWith(QLatin1String("MASTERDOWN"))
            || text.startsWith(QLatin1String("OOM")) || text.startsWith(QLatin1String("TRYAGAIN"))
            || text.startsWith(QLatin1String("CLUSTERDOWN")))
            return ErrorCode::Unavailable;
        return ErrorCode::Internal;
    }

    /// An error reply turned into a typed Error (classify()).
    Error replyError(const QString &what, const Reply &reply) const
    {
        const QString text = reply.errorText();
        if (text.startsWith(QLatin1String("NOAUTH")))
            return misconfigured(QStringLiteral("requires a password (%1); give it in the URL: "
                                                "redis://:password@host:port/db")
                                     .arg(text));
        if (classify(text) == ErrorCode::Misconfigured)
            return misconfigured(QStringLiteral("rejected the password (%1)").arg(text));
        if (classify(text) == ErrorCode::Unavailable)
            return m_backend->unavailable(QStringLiteral("%1 refused: %2").arg(what, text));
        return Error::make(ErrorCode::Internal,
                           QStringLiteral("Redis at %1: %2 failed: %3").arg(m_backend->endpoint(), what, text),
                           QStringLiteral("internal error"));
    }

    Error misconfigured(const QString &what) const
    {
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("Redis at %1 %2").arg(m_backend->endpoint(), what),
                           QStringLiteral("the key store is misconfigured"));
    }

private:
    Result<void> ensureConnected()
    {
        if (m_context && (closedByServer() || masterMoved()))
            drop();
        if (m_context)
            return {};
        if (m_backend->closed.load())
            return m_backend->unavailable(QStringLiteral("the key store was closed"));
        const QString backoffKey = m_fixedNode ? m_fixedNode->toString() : QString();
        if (auto gate = m_backend->backoffGate(backoffKey)) {
            if (m_backend->cluster) // its slots may have a new master by now
                m_backend->cluster->refreshSoon();
            return *gate;
        }

        const RedisOptions &options = m_backend->options;
        auto target = m_fixedNode ? Result<config::HostPort>(*m_fixedNode) : m_backend->target();
        if (!target.ok()) {
            m_backend->connectFailed(backoffKey, target.error());
            return target.error();
        }
        m_node = target.value();
        if (m_backend->sentinel)
            m_generation = m_backend->sentinel->generation();
        const QByteArray host = m_node.host.toUtf8();
        redisContext *context = redisConnectWithTimeout(host.constData(), m_node.port,
                                                        toTimeval(options.connectTimeout));
        if (!context || context->err) {
            const QString reason = context ? QString::fromLocal8Bit(context->errstr) : QStringLiteral("out of memory");
            if (context)
                redisFree(context);
            const Error error = m_backend->unavailable(QStringLiteral("cannot connect to %1 (timeout %2 ms): %3")
                                                           .arg(m_node.toString())
                                                           .arg(options.connectTimeout.count())
                                                           .arg(reason));
            m_backend->connectFailed(backoffKey, error);
            return error;
        }
        redisSetTimeout(context, toTimeval(options.commandTimeout));
        m_context = context;

        auto handshake = this->handshake(backoffKey);
        if (!handshake.ok()) {
            drop();
            m_backend->connectFailed(backoffKey, handshake.error());
            return handshake.error();
        }
        return {};
    }

    /// AUTH, SELECT, INFO server (run_id), the fence epoch for that run_id (from the
    /// database, cached per store; cluster mode: per slot, by the scripts), and for an
    /// instance not met before: CONFIG GET maxmemory-policy (a warning unless noeviction)
    /// and SCRIPT LOAD.
    Result<void> handshake(const QString &backoffKey)
    {
        const RedisOptions &options = m_backend->options;
        if (!options.password.isEmpty()) {
            std::vector<QByteArray> auth{QByteArrayLiteral("AUTH")};
            if (!options.username.isEmpty())
                auth.push_back(options.username.toUtf8());
            auth.push_back(options.password.toUtf8());
            auto reply = send(auth);
            if (!reply.ok())
                return reply.error();
            if (reply->isError())
                return replyError(QStringLiteral("AUTH"), *reply);
        }
        if (options.database != 0) {
            auto reply = send({QByteArrayLiteral("SELECT"), QByteArray::number(options.database)});
            if (!reply.ok())
                return reply.error();
            if (reply->isError())
                return misconfigured(
                    QStringLiteral("refused database %1 (%2)").arg(options.database).arg(reply->errorText()));
        }
        if (m_backend->sentinel) {
            if (auto master = checkIsMaster(); !master.ok())
                return master;
        }
        auto info = send({QByteArrayLiteral("INFO"), QByteArrayLiteral("server")});
        if (!info.ok())
            return info.error();
        if (info->isError())
            return replyError(QStringLiteral("INFO server"), *info);
        QString runId;
        for (const QByteArray &line : info->text.split('\n')) {
            if (line.startsWith("run_id:"))
                runId = QString::fromLatin1(line.mid(7).trimmed());
        }
        if (runId.isEmpty())
            return Error::make(ErrorCode::Internal,
                               QStringLiteral("Redis at %1: INFO server has no run_id").arg(m_backend->endpoint()),
                               QStringLiteral("internal error"));
        m_runId = runId;
        if (!m_backend->cluster) {
            if (auto trusted = ensureEpoch(runId); !trusted.ok())
                return trusted;
        }
        if (m_backend->policyToCheck(runId)) {
            if (auto checked = checkEvictionPolicy(); !checked.ok())
                return checked;
            m_backend->policyChecked(runId);
        }
        if (m_backend->connected(backoffKey, runId)) {
            for (const Script *script : allScripts()) {
                auto loaded = send({QByteArrayLiteral("SCRIPT"), QByteArrayLiteral("LOAD"), script->source});
                if (!loaded.ok())
                    return loaded.error();
                if (loaded->isError())
                    return replyError(QStringLiteral("SCRIPT LOAD"), *loaded);
                if (loaded->text != script->sha)
                    return Error::make(ErrorCode::Internal,
                                       QStringLiteral("Redis at %1: SCRIPT LOAD of %2 returned sha %3, expected %4")
                                           .arg(m_backend->endpoint(), QLatin1String(script->name),
                                                QString::fromLatin1(loaded->text), QString::fromLatin1(script->sha)),
                                       QStringLiteral("internal error"));
            }
            m_backend->scriptsLoaded(runId);
        }
        return {};
    }

    /// Sentinel mode: the node a Sentinel named answers ROLE as master. One that is still a
    /// replica (a Sentinel that has not seen the failover yet, a failback in progress) is
    /// not written to: the connect fails as Unavailable and every connection asks again.
    Result<void> checkIsMaster()
    {
        auto role = send({QByteArrayLiteral("ROLE")});
        if (!role.ok())
            return role.error();
        if (role->isError())
            return replyError(QStringLiteral("ROLE"), *role);
        const QByteArray name = role->type == Reply::Type::Array && !role->elements.empty() ? role->elements[0].text
                                                                                            : QByteArray();
        if (name == "master")
            return {};
        m_backend->sentinel->markNotMaster(m_node);
        return m_backend->unavailable(
            QStringLiteral("%1 answers ROLE as %2, not as the master").arg(m_node.toString(), QString::fromUtf8(name)));
    }

    /// Before this connection runs any command: the instance's fence state is one this
    /// store can continue, or it gets a new epoch from the database. Continued only when it
    /// has an epoch, installed by this very process (run_id), and no epoch above it was
    /// handed out since. Otherwise its counter may be below a token already handed out:
    /// a new instance or one restarted empty (no state), state restored from disk or
    /// replicated from another process (another run_id), or an instance that was left and
    /// is back (a failback: another instance got a larger epoch meanwhile).
    Result<void> ensureEpoch(const QString &runId)
    {
        // The store's connections that meet a new instance together check it one at a time,
        // so the first installs an epoch and the others continue it (not one epoch each).
        // Waited for at most a command timeout: past it the check runs anyway, so a call
        // keeps its time bound when the server or the database is slow.
        std::unique_lock serialised(m_backend->epochCheck, std::defer_lock);
        (void)serialised.try_lock_for(m_backend->options.commandTimeout);
        auto state = send(
            {QByteArrayLiteral("HMGET"), fenceStateKey(), QByteArrayLiteral("epoch"), QByteArrayLiteral("run_id")});
        if (!state.ok())
            return state.error();
        if (state->isError())
            return replyError(QStringLiteral("HMGET fence state"), *state);
        auto largest = m_backend->epochs.largestEpoch();
        if (!largest.ok())
            return m_backend->unavailable(
                QStringLiteral("the largest fence epoch is unknown: %1").arg(largest.error().internalMessage));
        const bool hasState = state->type == Reply::Type::Array && state->elements.size() == 2
                              && state->elements[0].type == Reply::Type::String;
        QString reason;
        if (!hasState)
            reason = QStringLiteral("no_fence_state");
        else if (state->elements[1].text != runId.toLatin1())
            reason = QStringLiteral("other_run_id");
        else if (state->elements[0].text.toULongLong() < largest.value())
            reason = QStringLiteral("below_largest");
        if (reason.isEmpty()) {
            m_backend->noteEpoch(state->elements[0].text.toULongLong());
            return {};
        }
        return installEpoch(runId, reason, fenceStateKey());
    }

    /// A new epoch from the database, installed in `stateKey` on this instance with its
    /// counter at 0 (unless another agent installed a larger one meanwhile: that one is in
    /// force).
    Result<void> installEpoch(const QString &runId, const QString &reason, const QByteArray &stateKey)
    {
        auto epoch = m_backend->epochs.newEpoch(runId, reason);
        if (!epoch.ok())
            return m_backend->unavailable(
                QStringLiteral("no new fence epoch for run_id %1: %2").arg(runId, epoch.error().internalMessage));
        auto installed = send({QByteArrayLiteral("EVAL"), QByteArray(installEpochScript), QByteArrayLiteral("1"),
                               stateKey, QByteArray::number(epoch.value()), runId.toLatin1()});
        if (!installed.ok())
            return installed.error();
        if (isRedirect(*installed)) // the slot moved since the script refused: nothing written
            return m_backend->unavailable(QStringLiteral("%1 moved while its fence epoch was installed (%2)")
                                              .arg(QString::fromUtf8(stateKey), installed->errorText()));
        if (installed->isError())
            return replyError(QStringLiteral("install fence epoch"), *installed);
        m_backend->noteEpoch(static_cast<quint64>(installed->integer));
        const QString message = QStringLiteral(
                                    "Redis at %1 (run_id %2, %3): fence epoch %4 handed out (%5), in force %6")
                                    .arg(m_node.toString(), runId, QString::fromUtf8(stateKey))
                                    .arg(epoch.value())
                                    .arg(reason)
                                    .arg(installed->integer);
        // A first epoch for a new instance is routine, and so is a cluster slot's first
        // state; anything else means the fence state could not be trusted.
        if (reason == QLatin1String("no_fence_state") && (epoch.value() == 1 || m_backend->cluster))
            qCInfo(lcRedis).noquote() << message;
        else
            qCWarning(lcRedis).noquote() << message;
        return {};
    }

    /// An evicting `maxmemory-policy` drops held locks and one-time tokens (an evicted
    /// fence:state is detected and gets a new epoch). Not ours to change: a warning, not a
    /// failure. A refused CONFIG (ACL, renamed command)
    /// skips the check; only a broken connection fails the handshake.
    Result<void> checkEvictionPolicy()
    {
        auto reply = send(
            {QByteArrayLiteral("CONFIG"), QByteArrayLiteral("GET"), QByteArrayLiteral("maxmemory-policy")});
        if (!reply.ok())
            return reply.error();
        if (reply->isError()) {
            qCInfo(lcRedis).noquote() << QStringLiteral("Redis at %1: cannot read maxmemory-policy (%2); make sure "
                                                        "it is noeviction, locks and tokens must never be evicted")
                                             .arg(m_backend->endpoint(), reply->errorText());
            return {};
        }
        QString policy;
        if (reply->type == Reply::Type::Array && reply->elements.size() == 2)
            policy = QString::fromUtf8(reply->elements[1].text);
        if (policy != QLatin1String("noeviction"))
            qCWarning(lcRedis).noquote()
                << QStringLiteral("Redis at %1: maxmemory-policy is %2, not noeviction: held locks and one-time "
                                  "tokens can be evicted; set maxmemory-policy noeviction")
                       .arg(m_backend->endpoint(), policy.isEmpty() ? QStringLiteral("unknown") : policy);
        return {};
    }

    /// One round trip on the open context. An I/O failure (server gone, timeout) closes
    /// the context: hiredis contexts are unusable after an error.
    Result<Reply> send(const std::vector<QByteArray> &args)
    {
        errno = 0;
        const ReplyPtr raw = ::payonce::redis::command(m_context, args); // hiredisclient.h
        if (!raw) {
            const int savedErrno = errno;
            m_lastWasTimeout = m_context->err == REDIS_ERR_IO && (savedErrno == EAGAIN || savedErrno == EWOULDBLOCK);
            const QString reason =
                m_lastWasTimeout
                    ? QStringLiteral("no answer within %1 ms").arg(m_backend->options.commandTimeout.count())
                    : QString::fromLocal8Bit(m_context->errstr);
            drop();
            return m_backend->unavailable(
                QStringLiteral("%1 failed: %2").arg(QString::fromLatin1(args.front()), reason));
        }
        m_lastWasTimeout = false;
        return Reply::from(raw.get());
    }

    /// Sentinel mode: the master changed (or was found not to be one) since this
    /// connection was opened.
    bool masterMoved() const { return m_backend->sentinel && m_backend->sentinel->generation() != m_generation; }

public:
    /// Cluster mode, after an ASK: the next command is for a slot being imported here.
    Result<void> asking()
    {
        auto reply = command({QByteArrayLiteral("ASKING")}, Retry::No);
        if (!reply.ok())
            return reply.error();
        if (reply->isError())
            return replyError(QStringLiteral("ASKING"), *reply);
        return {};
    }

private:
    /// True when the server has closed this (idle) connection or sent on it unasked: it
    /// restarted, failed over or timed the client out while this thread did other work.
    /// Looked at before each command, without waiting, so that a command which may not be
    /// sent twice (a lock's acquire, a token's consume) is not lost on a dead socket. A
    /// synchronous context between commands has nothing to read, so anything readable is
    /// the end of the stream or an error.
    bool closedByServer() const
    {
        pollfd watched{};
        watched.fd = m_context->fd;
        watched.events = POLLIN | POLLRDHUP;
        if (::poll(&watched, 1, 0) <= 0)
            return false;
        return (watched.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
    }

    void drop()
    {
        if (m_context) {
            redisFree(m_context);
            m_context = nullptr;
        }
    }

    std::shared_ptr<Backend> m_backend;
    redisContext *m_context = nullptr;
    QString m_runId;
    bool m_lastWasTimeout = false;
    std::optional<config::HostPort> m_fixedNode; ///< cluster mode: the node this connection is for
    config::HostPort m_node;                     ///< where this connection goes (the master a Sentinel named)
    quint64 m_generation = 0;                    ///< Sentinel mode: the master's generation when it was opened
};

/// The calling thread's connection to a backend (in cluster mode: to one of its nodes).
/// Connections of closed stores are freed on the thread's next call to any store, or at
/// thread exit.
Connection &connectionFor(const std::shared_ptr<Backend> &backend, const std::optional<config::HostPort> &node = {})
{
    thread_local std::vector<std::unique_ptr<Connection>> connections;
    std::erase_if(connections, [](const auto &connection) { return connection->backend()->closed.load(); });
    for (const auto &connection : connections) {
        if (connection->backend() == backend && connection->fixedNode() == node)
            return *connection;
    }
    connections.push_back(std::make_unique<Connection>(backend, node));
    return *connections.back();
}

using Call = std::function<Result<Reply>(Connection &)>;

/// Runs `call` on the calling thread's connection that serves `slot`: the store's one connection of this
/// thread in single and Sentinel modes; in cluster mode the one to the slot's master,
/// following MOVED (the slot has a new owner: the map learns it and the call runs there —
/// the command was not run, so this is safe for any command) and ASK (the slot is being
/// moved: ASKING and the call on the node named, once), a few hops at most.
Result<Reply> runOnSlot(const std::shared_ptr<Backend> &backend, int slot, const Call &call)
{
    if (!backend->cluster)
        return call(connectionFor(backend));
    auto master = backend->cluster->masterFor(slot);
    if (!master.ok()) {
        backend->degraded.store(true);
        return master.error();
    }
    config::HostPort node = master.value();
    bool asking = false;
    for (int hop = 0;; ++hop) {
        Connection &connection = connectionFor(backend, node);
        if (asking) {
            if (auto asked = connection.asking(); !asked.ok())
                return asked.error();
        }
        auto reply = call(connection);
        if (!reply.ok() || !Connection::isRedirect(*reply))
            return reply;
        // "MOVED <slot> <host>:<port>" / "ASK <slot> <host>:<port>"
        const QList<QByteArray> words = reply->text.split(' ');
        const qsizetype colon = words.size() == 3 ? words[2].lastIndexOf(':') : -1;
        bool portOk = false;
        const int port = colon > 0 ? words[2].mid(colon + 1).toInt(&portOk) : 0;
        if (!portOk || hop >= 4)
            return backend->unavailable(
                QStringLiteral("slot %1: %2 (after %3 redirects)").arg(slot).arg(reply->errorText()).arg(hop));
        node = config::HostPort{QString::fromUtf8(words[2].left(colon)), port};
        asking = words[0] == "ASK";
        if (!asking)
            backend->cluster->moved(slot, node);
    }
}

bool isOk(const Reply &reply)
{
    return reply.type == Reply::Type::Status && reply.text == "OK";
}

Error unexpected(const Backend &backend, const QString &what, const Reply &reply)
{
    return Error::make(ErrorCode::Internal,
                       QStringLiteral("Redis at %1: unexpected answer to %2 (type %3, \"%4\")")
                           .arg(backend.endpoint(), what)
                           .arg(static_cast<int>(reply.type))
                           .arg(QString::fromUtf8(reply.text.left(100))),
                       QStringLiteral("internal error"));
}

QByteArray utf8(const QString &text)
{
    return text.toUtf8();
}

} // namespace

// ---------------------------------------------------------------------------------------
// The ports

class RedisKeyStore::Private final : public core::TokenStore,
                                     public core::DistributedLock,
                                     public core::FencingTokens,
                                     public core::IdempotencyCache,
                                     public core::SeenProcessedSet {
public:
    Private(const RedisOptions &options, core::FenceEpochSource &epochs)
        : backend(std::make_shared<Backend>(options, epochs)), watchdog(std::make_shared<LeaseWatchdog>()),
          seenFront(options.seenProcessedCapacity, options.seenProcessedTtl)
    {
        if (backend->sentinel)
            backend->sentinel->startWatching();
    }

    ~Private() override
    {
        backend->closed.store(true);
        if (backend->sentinel) // the backend may outlive the store in threads' connection tables
            backend->sentinel->stopWatching();
    }

    // Checks a reply: transport errors pass through, error replies become typed errors
    // (but MOVED and ASK, for onSlot() to follow).
    Result<Reply> checked(Connection &connection, const QString &what, Result<Reply> reply)
    {
        if (reply.ok() && reply->isError() && !Connection::isRedirect(*reply))
            return connection.replyError(what, *reply);
        return reply;
    }

    Result<Reply> onSlot(int slot, const Call &call) { return runOnSlot(backend, slot, call); }

    /// The slot of a key (cluster mode; 0 otherwise, where it is not used).
    int slotOf(const QByteArray &key) const { return backend->cluster ? hashSlot(key) : 0; }

    Result<QString> issue(const QString &scope, milliseconds ttl) override
    {
        auto token = randomHex(16);
        if (!token.ok())
            return token.error();
        const QByteArray key = "token:" + utf8(scope);
        // Repeating the SET is harmless: the token we return is the one stored last.
        auto reply = onSlot(slotOf(key), [&](Connection &connection) {
            return checked(connection, QStringLiteral("SET token"),
                           connection.command({QByteArrayLiteral("SET"), key, utf8(token.value()),
                                               QByteArrayLiteral("PX"), msText(ttl)},
                                              Retry::OnStaleConnection));
        });
        if (!reply.ok())
            return reply.error();
        if (!isOk(*reply))
            return unexpected(*backend, QStringLiteral("SET token"), *reply);
        return token;
    }

    Result<bool> consume(const QString &scope, const QString &token) override
    {
        const QByteArray key = "token:" + utf8(scope);
        auto reply = onSlot(slotOf(key), [&](Connection &connection) {
            return connection.eval(compareAndDeleteScript(), {key}, {utf8(token)}, Retry::No);
        });
        if (!reply.ok())
            return reply.error();
        if (reply->type != Reply::Type::Integer)
            return unexpected(*backend, QStringLiteral("token consume"), *reply);
        return reply->integer == 1;
    }

    Result<std::unique_ptr<core::LockHandle>> acquire(const QString &key, milliseconds ttl,
                                                      const QString &fenceScope) override
    {
        // One watchdog thread renews every lease of this store, and one hung renewal holds
        // it for up to a command timeout: with ttl/3 between renewals, a shorter ttl could
        // run out behind a single hung call.
        const milliseconds shortest = 3 * backend->options.commandTimeout;
        if (ttl < shortest)
            return Error::make(ErrorCode::InvalidInput,
                               QStringLiteral("a lock ttl of %1 ms is too short: at least 3 x the command timeout "
                                              "(%2 ms) is needed to renew it")
                                   .arg(ttl.count())
                                   .arg(shortest.count()));
        auto owner = randomHex(16);
        if (!owner.ok())
            return owner.error();
        const auto sentAt = Clock::now();
        const FencePlacement placement = placeFence(backend->cluster != nullptr, key, fenceScope);
        // No retry: a script that landed before the connection broke would make the retry
        // see our own lock as taken; the orphan lease simply expires.
        std::vector<QByteArray> keys{placement.lockKey};
        if (!fenceScope.isEmpty())
            keys.push_back(placement.stateKey);
        std::vector<QByteArray> args{utf8(owner.value()), msText(ttl)};
        appendFloor(args, placement.floorIndex);
        auto reply = onSlot(placement.slot, [&](Connection &connection) {
            return connection.fenced(acquireScript(), keys, args, Retry::No);
        });
        if (!reply.ok())
            return reply.error();
        if (reply->type == Reply::Type::Nil)
            return std::unique_ptr<core::LockHandle>();
        if (fenceScope.isEmpty() && (reply->type != Reply::Type::Integer || reply->integer != 0))
            return unexpected(*backend, QStringLiteral("lock acquire"), *reply);

        // The release and the renewals route by slot again (the map may have changed by then).
        const std::shared_ptr<Backend> shared = backend;
        auto releaseFunction = [shared, lockKey = placement.lockKey, slot = placement.slot,
                                ownerValue = owner.value()]() -> Result<bool> {
            auto released = runOnSlot(shared, slot, [&](Connection &own) {
                return own.eval(compareAndDeleteScript(), {lockKey}, {utf8(ownerValue)}, Retry::No);
            });
            if (!released.ok())
                return released.error();
            return released->type == Reply::Type::Integer && released->integer == 1;
        };

        quint64 token = 0;
        if (!fenceScope.isEmpty()) {
            auto fence = tokenFrom(*reply, QStringLiteral("lock acquire"), placement.floorIndex);
            if (!fence.ok()) {
                (void)releaseFunction();
                return fence.error();
            }
            token = fence.value();
        }
        if (lockWonHook)
            lockWonHook();

        auto renewFunction = [shared, lockKey = placement.lockKey, slot = placement.slot, ownerValue = owner.value(),
                              ttl]() -> Result<bool> {
            // the watchdog thread's own connections
            auto renewed = runOnSlot(shared, slot, [&](Connection &own) {
                return own.eval(renewScript(), {lockKey}, {utf8(ownerValue), msText(ttl)}, Retry::OnStaleConnection);
            });
            if (!renewed.ok())
                return renewed.error();
            return renewed->type == Reply::Type::Integer && renewed->integer == 1;
        };
        auto lease = std::make_shared<Lease>(ttl, std::move(renewFunction), sentAt);
        watchdog->add(lease);
        return std::unique_ptr<core::LockHandle>(std::make_unique<LeaseHandle>(
            key, owner.value(), token, fenceScope, watchdog, std::move(lease), std::move(releaseFunction)));
    }

    /// Every scope's tokens come from the instance's one counter: larger than every token
    /// before it for any scope, so also for this one.
    Result<quint64> next(const QString &scope) override
    {
        // In cluster mode the state of the scope's slot: the one its locks draw from.
        const FencePlacement placement = placeFence(backend->cluster != nullptr, QString(),
                                                    scope.isEmpty() ? QStringLiteral("-") : scope);
        std::vector<QByteArray> args{QByteArray(), QByteArray()};
        appendFloor(args, placement.floorIndex);
        // Repeating it is harmless: a skipped token is never a problem.
        auto reply = onSlot(placement.slot, [&](Connection &connection) {
            return connection.fenced(nextTokenScript(), {placement.stateKey}, args, Retry::OnStaleConnection);
        });
        if (!reply.ok())
            return reply.error();
        return tokenFrom(*reply, QStringLiteral("next token"), placement.floorIndex);
    }

    /// The floor a fencing script checks: the largest token this store handed out from
    /// that fence state.
    void appendFloor(std::vector<QByteArray> &args, int floorIndex) const
    {
        const quint64 floor = backend->highestToken(floorIndex);
        args.push_back(QByteArray::number(floor >> 32));
        args.push_back(QByteArray::number(floor & 0xFFFFFFFFULL));
    }

    /// {epoch, counter} from a fencing script, as a token (recorded as the new floor).
    Result<quint64> tokenFrom(const Reply &reply, const QString &what, int floorIndex)
    {
        if (reply.type != Reply::Type::Array || reply.elements.size() != 2
            || reply.elements[0].type != Reply::Type::Integer || reply.elements[1].type != Reply::Type::Integer
            || reply.elements[0].integer <= 0 || reply.elements[0].integer > 0xFFFFFFFFLL
            || reply.elements[1].integer <= 0 || reply.elements[1].integer > 0xFFFFFFFFLL)
            return unexpected(*backend, what, reply);
        const quint64 token = (quint64(reply.elements[0].integer) << 32) | quint64(reply.elements[1].integer);
        backend->sawToken(floorIndex, token);
        backend->noteEpoch(quint64(reply.elements[0].integer));
        return token;
    }

    Result<std::optional<core::CachedResponse>> get(const QString &scope, const QString &key) override
    {
        const QByteArray stored = idemKey(scope, key);
        auto reply = onSlot(slotOf(stored), [&](Connection &connection) {
            return checked(connection, QStringLiteral("HMGET idem"),
                           connection.command(
                               {QByteArrayLiteral("HMGET"), stored, QByteArrayLiteral("fp"), QByteArrayLiteral("body")},
                               Retry::OnStaleConnection));
        });
        if (!reply.ok())
            return reply.error();
        if (reply->type != Reply::Type::Array || reply->elements.size() != 2)
            return unexpected(*backend, QStringLiteral("HMGET idem"), *reply);
        if (reply->elements[0].type != Reply::Type::String || reply->elements[1].type != Reply::Type::String)
            return std::optional<core::CachedResponse>();
        return std::optional<core::CachedResponse>(
            core::CachedResponse{reply->elements[0].text, reply->elements[1].text});
    }

    Result<void> put(const QString &scope, const QString &key, const core::CachedResponse &response,
                     milliseconds ttl) override
    {
        const QByteArray stored = idemKey(scope, key);
        auto reply = onSlot(slotOf(stored), [&](Connection &connection) {
            return connection.eval(putResponseScript(), {stored},
                                   {response.fingerprint, response.response, msText(ttl)}, Retry::OnStaleConnection);
        });
        if (!reply.ok())
            return reply.error();
        return {};
    }

    Result<void> markProcessed(const QString &channel, const QString &payNo, const core::SeenPayment &payment) override
    {
        const QString item = channel + QLatin1Char(':') + payNo;
        const QByteArray value = payment.encoded();
        seenFront.insert(item, value);
        const QByteArray key = "seen:" + utf8(item);
        auto reply = onSlot(slotOf(key), [&](Connection &connection) {
            return checked(connection, QStringLiteral("SET seen"),
                           connection.command({QByteArrayLiteral("SET"), key, value, QByteArrayLiteral("PX"),
                                               msText(backend->options.seenProcessedTtl)},
                                              Retry::OnStaleConnection));
        });
        if (!reply.ok())
            return reply.error();
        return {};
    }

    Result<core::SeenEntry> seen(const QString &channel, const QString &payNo) override
    {
        const QString item = channel + QLatin1Char(':') + payNo;
        if (const auto front = seenFront.find(item))
            return core::SeenEntry{true, core::SeenPayment::decode(*front)};
        const QByteArray key = "seen:" + utf8(item);
        auto reply = onSlot(slotOf(key), [&](Connection &connection) {
            return checked(connection, QStringLiteral("GET seen"),
                           connection.command({QByteArrayLiteral("GET"), key}, Retry::OnStaleConnection));
        });
        if (!reply.ok())
            return reply.error();
        if (reply->type == Reply::Type::Nil)
            return core::SeenEntry{};
        if (reply->type != Reply::Type::String)
            return unexpected(*backend, QStringLiteral("GET seen"), *reply);
        seenFront.insert(item, reply->text); // seen by another agent: remember it here too
        // An entry written before the content was kept ("1"): processed, content unknown.
        return core::SeenEntry{true, core::SeenPayment::decode(reply->text)};
    }

    static QByteArray idemKey(const QString &scope, const QString &key)
    {
        return "idem:" + utf8(scope) + ':' + utf8(key);
    }

    std::shared_ptr<Backend> backend;
    std::shared_ptr<LeaseWatchdog> watchdog;
    BoundedSeenSet seenFront;
    std::function<void()> lockWonHook; // tests only
};

RedisKeyStore::RedisKeyStore(const RedisOptions &options, core::FenceEpochSource &epochs)
    : d(std::make_unique<Private>(options, epochs))
{
}

RedisKeyStore::~RedisKeyStore() = default;

core::TokenStore &RedisKeyStore::tokens()
{
    return *d;
}
core::DistributedLock &RedisKeyStore::locks()
{
    return *d;
}
core::FencingTokens &RedisKeyStore::fencing()
{
    return *d;
}
core::IdempotencyCache &RedisKeyStore::idempotency()
{
    return *d;
}
const core::LockObserver &RedisKeyStore::lockObserver() const
{
    return d->watchdog->registry();
}
void RedisKeyStore::setLockLostSink(core::EventSink sink)
{
    d->watchdog->setLostSink(std::move(sink));
}
core::SeenProcessedSet &RedisKeyStore::seenProcessed()
{
    return *d;
}

bool RedisKeyStore::degraded() const
{
    return d->backend->degraded.load();
}

Result<void> RedisKeyStore::ping()
{
    const auto pingOn = [&](Connection &connection) -> Result<void> {
        auto reply = d->checked(connection, QStringLiteral("PING"),
                                connection.command({QByteArrayLiteral("PING")}, Retry::OnStaleConnection));
        if (!reply.ok())
            return reply.error();
        return {};
    };
    const std::shared_ptr<Backend> &backend = d->backend;
    if (!backend->cluster)
        return pingOn(connectionFor(backend));
    // A cluster answers for all its slots only when every master does. A master that does
    // not answer may have been failed over: the map is asked again, and the masters it
    // names then are pinged once more.
    for (int attempt = 0;; ++attempt) {
        if (attempt > 0 || backend->cluster->masters().isEmpty()) {
            if (auto refreshed = backend->cluster->refresh(); !refreshed.ok()) {
                backend->degraded.store(true);
                return refreshed.error();
            }
        }
        Result<void> pinged;
        for (const config::HostPort &master : backend->cluster->masters()) {
            pinged = pingOn(connectionFor(backend, master));
            if (!pinged.ok())
                break;
        }
        if (pinged.ok() || attempt > 0)
            return pinged;
    }
}

QString RedisKeyStore::instanceId() const
{
    return d->backend->lastRunId();
}

core::KeyStoreTopology RedisKeyStore::topology() const
{
    const Backend &backend = *d->backend;
    core::KeyStoreTopology topology;
    topology.fenceEpoch = backend.epochInForce.load();
    if (backend.cluster) {
        topology.mode = QStringLiteral("cluster");
        QStringList masters;
        for (const config::HostPort &master : backend.cluster->masters())
            masters << master.toString();
        topology.master = masters.join(u',');
        topology.masterSwitches = backend.cluster->switches();
        return topology;
    }
    if (!backend.sentinel) {
        topology.mode = QStringLiteral("single");
        topology.master = config::HostPort{backend.options.host, backend.options.port}.toString();
        return topology;
    }
    topology.mode = QStringLiteral("sentinel");
    if (const auto master = backend.sentinel->current())
        topology.master = master->toString();
    topology.masterSwitches = backend.sentinel->switches();
    return topology;
}

namespace {

/// SCAN of one node for lock keys (MATCH *lock:*, the exact prefix checked here), with each
/// one's owner and time left. Lock keys are strings; another type is not a lock of ours.
Result<void> scanNode(Connection &connection, int limit, core::StoredLockScan &scan)
{
    QByteArray cursor = QByteArrayLiteral("0");
    const QString node = connection.node().toString();
    do {
        auto page = connection.command({QByteArrayLiteral("SCAN"), cursor, QByteArrayLiteral("MATCH"),
                                        QByteArrayLiteral("*lock:*"), QByteArrayLiteral("COUNT"),
                                        QByteArrayLiteral("1000")},
                                       Retry::OnStaleConnection);
        if (!page.ok())
            return page.error();
        if (page->isError())
            return connection.replyError(QStringLiteral("SCAN"), *page);
        if (page->type != Reply::Type::Array || page->elements.size() != 2
            || page->elements[1].type != Reply::Type::Array)
            return unexpected(*connection.backend(), QStringLiteral("SCAN"), *page);
        cursor = page->elements[0].text;
        for (const Reply &key : page->elements[1].elements) {
            if (!isLockKey(key.text))
                continue;
            if (int(scan.locks.size()) >= limit) {
                scan.truncated = true;
                return {};
            }
            auto owner = connection.command({QByteArrayLiteral("GET"), key.text}, Retry::OnStaleConnection);
            auto left = connection.command({QByteArrayLiteral("PTTL"), key.text}, Retry::OnStaleConnection);
            if (!owner.ok())
                return owner.error();
            if (!left.ok())
                return left.error();
            // Gone since the SCAN (released, expired: PTTL -2), or not a string: not a lock.
            if (owner->type != Reply::Type::String || left->type != Reply::Type::Integer || left->integer == -2)
                continue;
            scan.locks.push_back(core::StoredLock{logicalLockKey(key.text), QString::fromUtf8(key.text), node,
                                                  QString::fromUtf8(owner->text), left->integer});
        }
    } while (cursor != "0");
    return {};
}

} // namespace

core::StoredLockScan RedisKeyStore::scanLocks(int limit)
{
    core::StoredLockScan scan;
    const std::shared_ptr<Backend> &backend = d->backend;
    const auto scanOne = [&](Connection &connection, const QString &name) {
        if (auto scanned = scanNode(connection, limit, scan); !scanned.ok())
            scan.failures << name + QStringLiteral(": ") + scanned.error().internalMessage;
        else
            scan.nodes << connection.node().toString();
    };
    if (!backend->cluster) {
        Connection &connection = connectionFor(backend);
        scanOne(connection, backend->endpoint());
        return scan;
    }
    if (auto refreshed = backend->cluster->refresh(); !refreshed.ok()) {
        scan.failures << refreshed.error().internalMessage;
        if (backend->cluster->masters().isEmpty())
            return scan;
    }
    for (const config::HostPort &master : backend->cluster->masters()) {
        if (scan.truncated)
            break;
        scanOne(connectionFor(backend, master), master.toString());
    }
    return scan;
}

const RedisOptions &RedisKeyStore::options() const
{
    return d->backend->options;
}

void RedisKeyStore::setLockWonHookForTest(std::function<void()> hook)
{
    d->lockWonHook = std::move(hook);
}

} // namespace payonce::redis
