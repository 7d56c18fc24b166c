#pragma once

// One hiredis context used by one thread only, and the routing of a call to the connection
// that serves a slot (rediskeystore.cpp).

#include "keystorebackend_p.h"
#include "keystorescripts_p.h"

#include "hiredisclient.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <functional>

#include <poll.h>

namespace payonce::redis::keystore {

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
Connection &connectionFor(const std::shared_ptr<Backend> &backend, const std::optional<config::HostPort> &node = {});

using Call = std::function<Result<Reply>(Connection &)>;

/// Runs `call` on the calling thread's connection that serves `slot`: the store's one connection of this
/// thread in single and Sentinel modes; in cluster mode the one to the slot's master,
/// following MOVED (the slot has a new owner: the map learns it and the call runs there —
/// the command was not run, so this is safe for any command) and ASK (the slot is being
/// moved: ASKING and the call on the node named, once), a few hops at most.
Result<Reply> runOnSlot(const std::shared_ptr<Backend> &backend, int slot, const Call &call);

inline bool isOk(const Reply &reply)
{
    return reply.type == Reply::Type::Status && reply.text == "OK";
}

inline Error unexpected(const Backend &backend, const QString &what, const Reply &reply)
{
    return Error::make(ErrorCode::Internal,
                       QStringLiteral("Redis at %1: unexpected answer to %2 (type %3, \"%4\")")
                           .arg(backend.endpoint(), what)
                           .arg(static_cast<int>(reply.type))
                           .arg(QString::fromUtf8(reply.text.left(100))),
                       QStringLiteral("internal error"));
}

inline QByteArray utf8(const QString &text)
{
    return text.toUtf8();
}

} // namespace payonce::redis::keystore
