#include "rediskeystore.h"

#include "boundedseenset.h"
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
#include <poll.h>
#include <mutex>
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
    enum class Type { Nil, Integer, String, Status, Error, Array };
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
        default:
            result.type = Type::Nil;
            break;
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
        "renew",
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
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

// Shared by the fencing scripts, which declare `epoch` and `counter` first and get them set
// here (KEYS[n] = the fence state; ARGV[3], ARGV[4] = the largest
// token this agent has seen, epoch and counter): refuses, before anything is written, an
// instance without fence state, with a full counter, or whose state went back below a
// token this agent already has (restored from an older snapshot). The caller installs a
// new epoch and runs the script again.
#define PAYONCE_FENCE_CHECK(stateKey)                                                              \
    "local state = redis.call('HMGET', " stateKey ", 'epoch', 'counter') "                         \
    "if not state[1] then return redis.error_reply('FENCE_NO_STATE no fence state') end "                         \
    "epoch, counter = tonumber(state[1]), tonumber(state[2] or '0') "                        \
    "if counter >= 4294967295 then return redis.error_reply('FENCE_FULL the counter is full') end "                    \
    "local floorEpoch, floorCounter = tonumber(ARGV[3]), tonumber(ARGV[4]) "                       \
    "if epoch < floorEpoch or (epoch == floorEpoch and counter < floorCounter) then "              \
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
        "if #KEYS > 1 then " PAYONCE_FENCE_CHECK("KEYS[2]") "end "
        "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end "
        "if #KEYS > 1 then return {epoch, redis.call('HINCRBY', KEYS[2], 'counter', 1)} end "
        "return 0");
    return script;
}

// The next token without a lock: {epoch, counter} (ARGV[1], ARGV[2] unused).
const Script &nextTokenScript()
{
    static const Script script = makeScript(
        "next_token",
        "local epoch, counter = 0, 0 " PAYONCE_FENCE_CHECK("KEYS[1]")
        "return {epoch, redis.call('HINCRBY', KEYS[1], 'counter', 1)}");
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
        "put_response",
        "redis.call('DEL', KEYS[1]) redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'body', ARGV[2]) "
        "redis.call('PEXPIRE', KEYS[1], ARGV[3]) return 1");
    return script;
}

const std::vector<const Script *> &allScripts()
{
    static const std::vector<const Script *> scripts{&compareAndDeleteScript(), &renewScript(), &acquireScript(),
                                                     &nextTokenScript(), &putResponseScript()};
    return scripts;
}

timeval toTimeval(milliseconds duration)
{
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
    return tv;
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
        : options(opts)
        , epochs(source)
        , id(g_nextBackendId.fetch_add(1))
        , sentinel(opts.sentinelMode() ? std::make_unique<SentinelMaster>(opts) : nullptr)
    {
    }

    const RedisOptions options;
    core::FenceEpochSource &epochs;
    const quint64 id;
    /// Sentinel mode: where the master is now. Null for a single address.
    const std::unique_ptr<SentinelMaster> sentinel;

    /// The node connections go to: the configured address, or the master a Sentinel names.
    Result<config::HostPort> target() const
    {
        if (sentinel)
            return sentinel->resolve();
        return config::HostPort{options.host, options.port};
    }

    /// For messages: "host:port/db", in Sentinel mode with the master's name and address.
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
    /// The fence epoch in force on the instance last connected to (for topology()).
    std::atomic<quint64> epochInForce{0};
    /// Held while a connection checks (and if need be installs) the instance's fence epoch.
    std::timed_mutex epochCheck;

    /// Before a connect: an Error if we are inside the backoff after a failed connect.
    std::optional<Error> backoffGate()
    {
        std::lock_guard lock(m_mutex);
        const auto now = Clock::now();
        if (now >= m_nextConnectAt)
            return std::nullopt;
        // Sentinel mode: a new master since the failed connect ends the backoff — the
        // connects failed against the old one; the new one is worth trying at once.
        if (sentinel && sentinel->generation() != m_failedAtGeneration)
            return std::nullopt;
        const auto left = std::chrono::duration_cast<milliseconds>(m_nextConnectAt - now);
        Error error = m_lastConnectError;
        error.internalMessage += QStringLiteral(" (next attempt in %1 ms)").arg(left.count());
        return error;
    }

    void connectFailed(const Error &error)
    {
        degraded.store(true);
        std::lock_guard lock(m_mutex);
        m_backoff = m_backoff.count() == 0 ? options.minBackoff : std::min(m_backoff * 2, options.maxBackoff);
        m_nextConnectAt = Clock::now() + m_backoff;
        m_lastConnectError = error;
        if (sentinel)
            m_failedAtGeneration = sentinel->generation();
    }

    /// Returns true when this run_id was never seen by this store (scripts to load).
    bool connected(const QString &runId)
    {
        std::lock_guard lock(m_mutex);
        m_backoff = milliseconds(0);
        m_nextConnectAt = Clock::time_point();
        if (m_lastRunId != runId) {
            if (!m_lastRunId.isEmpty())
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

    /// The largest token this store has handed out: the floor every later one must pass.
    quint64 highestToken() const { return m_highestToken.load(); }
    void sawToken(quint64 token)
    {
        quint64 seen = m_highestToken.load();
        while (token > seen && !m_highestToken.compare_exchange_weak(seen, token)) {
        }
    }

    Error unavailable(const QString &what) const
    {
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("Redis at %1: %2").arg(endpoint(), what),
                           QStringLiteral("the key store is unavailable"));
    }

private:
    mutable std::mutex m_mutex;
    Clock::time_point m_nextConnectAt;
    milliseconds m_backoff{0};
    Error m_lastConnectError;
    quint64 m_failedAtGeneration = 0; ///< Sentinel mode: the master's generation at the last failed connect
    QString m_lastRunId;
    QSet<QString> m_scriptsLoadedFor;
    QSet<QString> m_policyCheckedFor;
    std::atomic<quint64> m_highestToken{0};
};

// ---------------------------------------------------------------------------------------
// Connection: one hiredis context, used by one thread only

namespace {

enum class Retry { No, OnStaleConnection };

class Connection {
public:
    explicit Connection(std::shared_ptr<Backend> backend) : m_backend(std::move(backend)) {}
    ~Connection() { drop(); }
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    const std::shared_ptr<Backend> &backend() const { return m_backend; }
    /// The run_id of the instance this connection is talking to (set by the handshake).
    QString runId() const { return m_runId; }

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
            if (retry == Retry::OnStaleConnection && reused && attempt == 0 && !m_lastWasTimeout)
                continue;
            return reply;
        }
    }

    /// EVALSHA, and on NOSCRIPT: SCRIPT LOAD and EVALSHA once more.
    Result<Reply> eval(const Script &script, const std::vector<QByteArray> &keys,
                       const std::vector<QByteArray> &args, Retry retry)
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
        if (reply.ok() && reply->isError() && !isFenceRefusal(*reply))
            return replyError(QStringLiteral("script %1").arg(QLatin1String(script.name)), *reply);
        return reply;
    }

    /// A fencing script (acquire with a fence scope, next token): when it refuses because
    /// the instance's fence state cannot be trusted (none, full counter, behind a token this
    /// store already has), a new epoch is installed and the script runs once more — it
    /// wrote nothing when it refused, so running it again is safe even for the acquire.
    Result<Reply> fenced(const Script &script, const std::vector<QByteArray> &keys,
                         const std::vector<QByteArray> &args, Retry retry)
    {
        auto reply = eval(script, keys, args, retry);
        if (!reply.ok() || !isFenceRefusal(*reply))
            return reply;
        static const QHash<QByteArray, QString> reasons{{QByteArrayLiteral("FENCE_NO_STATE"), QStringLiteral("no_fence_state")},
                                                        {QByteArrayLiteral("FENCE_FULL"), QStringLiteral("counter_full")},
                                                        {QByteArrayLiteral("FENCE_BEHIND"), QStringLiteral("behind_this_agent")}};
        if (auto installed = installEpoch(m_runId, reasons.value(fenceRefusal(*reply), QStringLiteral("refused")));
            !installed.ok())
            return installed.error();
        reply = eval(script, keys, args, Retry::No);
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
    /// refuses for now: loading, read-only replica, out of memory…) or Internal.
    static ErrorCode classify(const QString &text)
    {
        if (text.startsWith(QLatin1String("NOAUTH")) || text.startsWith(QLatin1String("WRONGPASS"))
            || text.contains(QLatin1String("invalid password")))
            return ErrorCode::Misconfigured;
        if (text.startsWith(QLatin1String("LOADING")) || text.startsWith(QLatin1String("BUSY"))
            || text.startsWith(QLatin1String("READONLY")) || text.startsWith(QLatin1String("MASTERDOWN"))
            || text.startsWith(QLatin1String("OOM")) || text.startsWith(QLatin1String("TRYAGAIN")))
            return ErrorCode::Unavailable;
        return ErrorCode::Internal;
    }

    /// An error reply turned into a typed Error (classify()).
    Error replyError(const QString &what, const Reply &reply) const
    {
        const QString text = reply.errorText();
        if (text.startsWith(QLatin1String("NOAUTH")))
            return misconfigured(QStringLiteral("requires a password (%1); give it in the URL: "
                                                "redis://:password@host:port/db").arg(text));
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
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("Redis at %1 %2").arg(m_backend->endpoint(), what),
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
        if (auto gate = m_backend->backoffGate())
            return *gate;

        const RedisOptions &options = m_backend->options;
        auto target = m_backend->target();
        if (!target.ok()) {
            m_backend->connectFailed(target.error());
            return target.error();
        }
        m_node = target.value();
        if (m_backend->sentinel)
            m_generation = m_backend->sentinel->generation();
        const QByteArray host = m_node.host.toUtf8();
        redisContext *context = redisConnectWithTimeout(host.constData(), m_node.port,
                                                        toTimeval(options.connectTimeout));
        if (!context || context->err) {
            const QString reason = context ? QString::fromLocal8Bit(context->errstr)
                                           : QStringLiteral("out of memory");
            if (context)
                redisFree(context);
            const Error error = m_backend->unavailable(
                QStringLiteral("cannot connect (timeout %1 ms): %2").arg(options.connectTimeout.count()).arg(reason));
            m_backend->connectFailed(error);
            return error;
        }
        redisSetTimeout(context, toTimeval(options.commandTimeout));
        m_context = context;

        auto handshake = this->handshake();
        if (!handshake.ok()) {
            drop();
            m_backend->connectFailed(handshake.error());
            return handshake.error();
        }
        return {};
    }

    /// AUTH, SELECT, INFO server (run_id), the fence epoch for that run_id (from the
    /// database, cached per store), and for an instance not met before: CONFIG GET
    /// maxmemory-policy (a warning unless noeviction) and SCRIPT LOAD.
    Result<void> handshake()
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
                return misconfigured(QStringLiteral("refused database %1 (%2)")
                                         .arg(options.database).arg(reply->errorText()));
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
        if (auto trusted = ensureEpoch(runId); !trusted.ok())
            return trusted;
        if (m_backend->policyToCheck(runId)) {
            if (auto checked = checkEvictionPolicy(); !checked.ok())
                return checked;
            m_backend->policyChecked(runId);
        }
        if (m_backend->connected(runId)) {
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
        const QByteArray name = role->type == Reply::Type::Array && !role->elements.empty()
            ? role->elements[0].text
            : QByteArray();
        if (name == "master")
            return {};
        m_backend->sentinel->markNotMaster(m_node);
        return m_backend->unavailable(QStringLiteral("%1 answers ROLE as %2, not as the master")
                                          .arg(m_node.toString(), QString::fromUtf8(name)));
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
        auto state = send({QByteArrayLiteral("HMGET"), fenceStateKey(), QByteArrayLiteral("epoch"),
                           QByteArrayLiteral("run_id")});
        if (!state.ok())
            return state.error();
        if (state->isError())
            return replyError(QStringLiteral("HMGET fence state"), *state);
        auto largest = m_backend->epochs.largestEpoch();
        if (!largest.ok())
            return m_backend->unavailable(QStringLiteral("the largest fence epoch is unknown: %1")
                                              .arg(largest.error().internalMessage));
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
            m_backend->epochInForce.store(state->elements[0].text.toULongLong());
            return {};
        }
        return installEpoch(runId, reason);
    }

    /// A new epoch from the database, installed on this instance with its counter at 0
    /// (unless another agent installed a larger one meanwhile: that one is in force).
    Result<void> installEpoch(const QString &runId, const QString &reason)
    {
        auto epoch = m_backend->epochs.newEpoch(runId, reason);
        if (!epoch.ok())
            return m_backend->unavailable(QStringLiteral("no new fence epoch for run_id %1: %2")
                                              .arg(runId, epoch.error().internalMessage));
        auto installed = send({QByteArrayLiteral("EVAL"), QByteArray(installEpochScript), QByteArrayLiteral("1"),
                               fenceStateKey(), QByteArray::number(epoch.value()), runId.toLatin1()});
        if (!installed.ok())
            return installed.error();
        if (installed->isError())
            return replyError(QStringLiteral("install fence epoch"), *installed);
        m_backend->epochInForce.store(static_cast<quint64>(installed->integer));
        const QString message = QStringLiteral("Redis at %1 (run_id %2): fence epoch %3 handed out (%4), in force %5")
                                    .arg(m_backend->endpoint(), runId)
                                    .arg(epoch.value())
                                    .arg(reason)
                                    .arg(installed->integer);
        // A first epoch for a new instance is routine; anything else means the instance's
        // fence state could not be trusted.
        if (reason == QLatin1String("no_fence_state") && epoch.value() == 1)
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
        auto reply = send({QByteArrayLiteral("CONFIG"), QByteArrayLiteral("GET"), QByteArrayLiteral("maxmemory-policy")});
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
        std::vector<const char *> argv;
        std::vector<size_t> lengths;
        argv.reserve(args.size());
        lengths.reserve(args.size());
        for (const QByteArray &arg : args) {
            argv.push_back(arg.constData());
            lengths.push_back(static_cast<size_t>(arg.size()));
        }
        errno = 0;
        void *raw = redisCommandArgv(m_context, static_cast<int>(argv.size()), argv.data(), lengths.data());
        if (!raw) {
            const int savedErrno = errno;
            m_lastWasTimeout = m_context->err == REDIS_ERR_IO && (savedErrno == EAGAIN || savedErrno == EWOULDBLOCK);
            const QString reason = m_lastWasTimeout
                ? QStringLiteral("no answer within %1 ms").arg(m_backend->options.commandTimeout.count())
                : QString::fromLocal8Bit(m_context->errstr);
            drop();
            return m_backend->unavailable(
                QStringLiteral("%1 failed: %2").arg(QString::fromLatin1(args.front()), reason));
        }
        m_lastWasTimeout = false;
        auto *reply = static_cast<redisReply *>(raw);
        Reply result = Reply::from(reply);
        freeReplyObject(reply);
        return result;
    }

    /// Sentinel mode: the master changed (or was found not to be one) since this
    /// connection was opened.
    bool masterMoved() const
    {
        return m_backend->sentinel && m_backend->sentinel->generation() != m_generation;
    }

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
    config::HostPort m_node;  ///< where this connection goes (the master a Sentinel named)
    quint64 m_generation = 0; ///< Sentinel mode: the master's generation when it was opened
};

/// The calling thread's connection to a backend. Connections of closed stores are freed
/// on the thread's next call to any store, or at thread exit.
Connection &connectionFor(const std::shared_ptr<Backend> &backend)
{
    thread_local std::vector<std::unique_ptr<Connection>> connections;
    std::erase_if(connections, [](const auto &connection) { return connection->backend()->closed.load(); });
    for (const auto &connection : connections) {
        if (connection->backend() == backend)
            return *connection;
    }
    connections.push_back(std::make_unique<Connection>(backend));
    return *connections.back();
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
        : backend(std::make_shared<Backend>(options, epochs))
        , watchdog(std::make_shared<LeaseWatchdog>())
        , seenFront(options.seenProcessedCapacity, options.seenProcessedTtl)
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

    // Checks a reply: transport errors pass through, error replies become typed errors.
    Result<Reply> checked(Connection &connection, const QString &what, Result<Reply> reply)
    {
        if (reply.ok() && reply->isError())
            return connection.replyError(what, *reply);
        return reply;
    }

    Result<QString> issue(const QString &scope, milliseconds ttl) override
    {
        auto token = randomHex(16);
        if (!token.ok())
            return token.error();
        Connection &connection = connectionFor(backend);
        // Repeating the SET is harmless: the token we return is the one stored last.
        auto reply = checked(connection, QStringLiteral("SET token"),
                             connection.command({QByteArrayLiteral("SET"), "token:" + utf8(scope),
                                                 utf8(token.value()), QByteArrayLiteral("PX"), msText(ttl)},
                                                Retry::OnStaleConnection));
        if (!reply.ok())
            return reply.error();
        if (!isOk(*reply))
            return unexpected(*backend, QStringLiteral("SET token"), *reply);
        return token;
    }

    Result<bool> consume(const QString &scope, const QString &token) override
    {
        Connection &connection = connectionFor(backend);
        auto reply = connection.eval(compareAndDeleteScript(), {"token:" + utf8(scope)}, {utf8(token)}, Retry::No);
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
        Connection &connection = connectionFor(backend);
        const auto sentAt = Clock::now();
        // No retry: a script that landed before the connection broke would make the retry
        // see our own lock as taken; the orphan lease simply expires.
        std::vector<QByteArray> keys{utf8(key)};
        if (!fenceScope.isEmpty())
            keys.push_back(fenceStateKey());
        std::vector<QByteArray> args{utf8(owner.value()), msText(ttl)};
        appendFloor(args);
        auto reply = connection.fenced(acquireScript(), keys, args, Retry::No);
        if (!reply.ok())
            return reply.error();
        if (reply->type == Reply::Type::Nil)
            return std::unique_ptr<core::LockHandle>();
        if (fenceScope.isEmpty() && (reply->type != Reply::Type::Integer || reply->integer != 0))
            return unexpected(*backend, QStringLiteral("lock acquire"), *reply);

        const std::shared_ptr<Backend> shared = backend;
        auto releaseFunction = [shared, key, ownerValue = owner.value()]() -> Result<bool> {
            Connection &own = connectionFor(shared);
            auto released = own.eval(compareAndDeleteScript(), {utf8(key)}, {utf8(ownerValue)}, Retry::No);
            if (!released.ok())
                return released.error();
            return released->type == Reply::Type::Integer && released->integer == 1;
        };

        quint64 token = 0;
        if (!fenceScope.isEmpty()) {
            auto fence = tokenFrom(*reply, QStringLiteral("lock acquire"));
            if (!fence.ok()) {
                (void)releaseFunction();
                return fence.error();
            }
            token = fence.value();
        }
        if (lockWonHook)
            lockWonHook();

        auto renewFunction = [shared, key, ownerValue = owner.value(), ttl]() -> Result<bool> {
            Connection &own = connectionFor(shared); // the watchdog thread's own context
            auto renewed = own.eval(renewScript(), {utf8(key)}, {utf8(ownerValue), msText(ttl)},
                                    Retry::OnStaleConnection);
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
    Result<quint64> next(const QString &) override
    {
        Connection &connection = connectionFor(backend);
        std::vector<QByteArray> args{QByteArray(), QByteArray()};
        appendFloor(args);
        // Repeating it is harmless: a skipped token is never a problem.
        auto reply = connection.fenced(nextTokenScript(), {fenceStateKey()}, args, Retry::OnStaleConnection);
        if (!reply.ok())
            return reply.error();
        return tokenFrom(*reply, QStringLiteral("next token"));
    }

    /// The floor a fencing script checks: the largest token this store handed out.
    void appendFloor(std::vector<QByteArray> &args) const
    {
        const quint64 floor = backend->highestToken();
        args.push_back(QByteArray::number(floor >> 32));
        args.push_back(QByteArray::number(floor & 0xFFFFFFFFULL));
    }

    /// {epoch, counter} from a fencing script, as a token (recorded as the new floor).
    Result<quint64> tokenFrom(const Reply &reply, const QString &what)
    {
        if (reply.type != Reply::Type::Array || reply.elements.size() != 2
            || reply.elements[0].type != Reply::Type::Integer || reply.elements[1].type != Reply::Type::Integer
            || reply.elements[0].integer <= 0 || reply.elements[0].integer > 0xFFFFFFFFLL
            || reply.elements[1].integer <= 0 || reply.elements[1].integer > 0xFFFFFFFFLL)
            return unexpected(*backend, what, reply);
        const quint64 token = (quint64(reply.elements[0].integer) << 32) | quint64(reply.elements[1].integer);
        backend->sawToken(token);
        return token;
    }

    Result<std::optional<core::CachedResponse>> get(const QString &scope, const QString &key) override
    {
        Connection &connection = connectionFor(backend);
        auto reply = checked(connection, QStringLiteral("HMGET idem"),
                             connection.command({QByteArrayLiteral("HMGET"), idemKey(scope, key),
                                                 QByteArrayLiteral("fp"), QByteArrayLiteral("body")},
                                                Retry::OnStaleConnection));
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
        Connection &connection = connectionFor(backend);
        auto reply = connection.eval(putResponseScript(), {idemKey(scope, key)},
                                     {response.fingerprint, response.response, msText(ttl)},
                                     Retry::OnStaleConnection);
        if (!reply.ok())
            return reply.error();
        return {};
    }

    Result<void> markProcessed(const QString &channel, const QString &payNo, const core::SeenPayment &payment) override
    {
        const QString item = channel + QLatin1Char(':') + payNo;
        const QByteArray value = payment.encoded();
        seenFront.insert(item, value);
        Connection &connection = connectionFor(backend);
        auto reply = checked(connection, QStringLiteral("SET seen"),
                             connection.command({QByteArrayLiteral("SET"), "seen:" + utf8(item), value,
                                                 QByteArrayLiteral("PX"), msText(backend->options.seenProcessedTtl)},
                                                Retry::OnStaleConnection));
        if (!reply.ok())
            return reply.error();
        return {};
    }

    Result<core::SeenEntry> seen(const QString &channel, const QString &payNo) override
    {
        const QString item = channel + QLatin1Char(':') + payNo;
        if (const auto front = seenFront.find(item))
            return core::SeenEntry{true, core::SeenPayment::decode(*front)};
        Connection &connection = connectionFor(backend);
        auto reply = checked(connection, QStringLiteral("GET seen"),
                             connection.command({QByteArrayLiteral("GET"), "seen:" + utf8(item)},
                                                Retry::OnStaleConnection));
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

core::TokenStore &RedisKeyStore::tokens() { return *d; }
core::DistributedLock &RedisKeyStore::locks() { return *d; }
core::FencingTokens &RedisKeyStore::fencing() { return *d; }
core::IdempotencyCache &RedisKeyStore::idempotency() { return *d; }
const core::LockObserver &RedisKeyStore::lockObserver() const { return d->watchdog->registry(); }
void RedisKeyStore::setLockLostSink(core::EventSink sink) { d->watchdog->setLostSink(std::move(sink)); }
core::SeenProcessedSet &RedisKeyStore::seenProcessed() { return *d; }

bool RedisKeyStore::degraded() const
{
    return d->backend->degraded.load();
}

Result<void> RedisKeyStore::ping()
{
    Connection &connection = connectionFor(d->backend);
    auto reply = d->checked(connection, QStringLiteral("PING"),
                            connection.command({QByteArrayLiteral("PING")}, Retry::OnStaleConnection));
    if (!reply.ok())
        return reply.error();
    return {};
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

const RedisOptions &RedisKeyStore::options() const
{
    return d->backend->options;
}

void RedisKeyStore::setLockWonHookForTest(std::function<void()> hook)
{
    d->lockWonHook = std::move(hook);
}

} // namespace payonce::redis
