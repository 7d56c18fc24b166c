#include "sentinelmaster.h"

#include "hiredisclient.h"

#include <QLoggingCategory>
#include <QStringList>

#include <hiredis/hiredis.h>
#include <poll.h>

#include <memory>

namespace payonce::redis {

Q_DECLARE_LOGGING_CATEGORY(lcRedis)

using config::HostPort;
using core::Error;
using core::ErrorCode;
using core::Result;
using std::chrono::milliseconds;

namespace {

/// A connection to one Sentinel, authenticated with the Sentinels' own password; or the
/// reason there is none.
Result<ContextPtr> openSentinel(const HostPort &sentinel, const RedisOptions &options)
{
    return openAuthenticated(sentinel, options.connectTimeout, options.commandTimeout, QString(),
                             options.sentinelPassword);
}

} // namespace

SentinelMaster::SentinelMaster(const RedisOptions &options) : m_options(options)
{
}

SentinelMaster::~SentinelMaster()
{
    stopWatching();
}

void SentinelMaster::stopWatching()
{
    {
        std::lock_guard lock(m_stopMutex);
        m_stop = true;
    }
    m_stopChanged.notify_all();
    if (m_watcher.joinable())
        m_watcher.join();
}

Result<HostPort> SentinelMaster::resolve()
{
    const QList<HostPort> &sentinels = m_options.sentinels;
    int first = 0;
    {
        std::lock_guard lock(m_mutex);
        first = m_preferred;
    }
    QStringList said;
    int refusedUs = 0; // Sentinels that refused our AUTH, or asked for one we did not send
    for (int i = 0; i < sentinels.size(); ++i) {
        const int index = (first + i) % int(sentinels.size());
        const HostPort &sentinel = sentinels.at(index);
        auto context = openSentinel(sentinel, m_options);
        if (!context.ok()) {
            if (context.error().code == ErrorCode::Misconfigured)
                ++refusedUs;
            said << sentinel.toString() + QStringLiteral(": ") + context.error().internalMessage;
            continue;
        }
        ReplyPtr reply = command(context.value().get(),
                                 {QByteArrayLiteral("SENTINEL"), QByteArrayLiteral("get-master-addr-by-name"),
                                  m_options.masterName.toUtf8()});
        if (!reply) {
            said << sentinel.toString() + QStringLiteral(": ") + errorOf(context.value().get());
            continue;
        }
        if (reply->type == REDIS_REPLY_ERROR) {
            if (replyText(reply.get()).startsWith(QLatin1String("NOAUTH")))
                ++refusedUs;
            said << sentinel.toString() + QStringLiteral(": ") + replyText(reply.get());
            continue;
        }
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) {
            said << sentinel.toString() + QStringLiteral(": does not know master \"%1\"").arg(m_options.masterName);
            continue;
        }
        const QString host = replyText(reply->element[0]);
        bool portOk = false;
        const int port = replyText(reply->element[1]).toInt(&portOk);
        if (host.isEmpty() || !portOk || port <= 0 || port > 65535) {
            said << sentinel.toString() + QStringLiteral(": an unusable address");
            continue;
        }
        const HostPort master{host, port};
        {
            std::lock_guard lock(m_mutex);
            m_preferred = index;
        }
        moveTo(master, QStringLiteral("Sentinel %1").arg(sentinel.toString()));
        return master;
    }
    // Every Sentinel turned our credentials down: a wrong or missing Sentinel password is a
    // misconfiguration, not an outage (as a master that refuses its password). Unavailable
    // as soon as one Sentinel failed otherwise (down, does not know the master).
    if (refusedUs > 0 && refusedUs == sentinels.size())
        return Error::make(
            ErrorCode::Misconfigured,
            QStringLiteral("no Sentinel names the master \"%1\": every Sentinel refused us, the Sentinel "
                           "password (redis_sentinel_password) is wrong or missing: %2")
                .arg(m_options.masterName, said.join(u"; ")),
            QStringLiteral("the key store is misconfigured"));
    return Error::make(
        ErrorCode::Unavailable,
        QStringLiteral("no Sentinel names the master \"%1\": %2").arg(m_options.masterName, said.join(u"; ")),
        QStringLiteral("the key store is unavailable"));
}

std::optional<HostPort> SentinelMaster::current() const
{
    std::lock_guard lock(m_mutex);
    return m_master;
}

void SentinelMaster::markNotMaster(const HostPort &node)
{
    // The address stays known: every reconnect asks the Sentinels anyway. What matters is
    // that every connection to `node` is closed before its next command.
    std::lock_guard lock(m_mutex);
    if (m_master && *m_master == node) {
        qCWarning(lcRedis).noquote() << QStringLiteral("Redis at %1 is not the master of \"%2\" any more; every "
                                                       "connection asks the Sentinels again")
                                            .arg(node.toString(), m_options.masterName);
        m_generation.fetch_add(1);
    }
}

void SentinelMaster::moveTo(const HostPort &master, const QString &why)
{
    std::lock_guard lock(m_mutex);
    if (m_master && *m_master == master)
        return;
    const QString message =
        QStringLiteral("Redis master of \"%1\" is %2 (%3)").arg(m_options.masterName, master.toString(), why);
    if (m_master) {
        m_switches.fetch_add(1);
        qCWarning(lcRedis).noquote() << message + QStringLiteral(", was ") + m_master->toString();
    } else {
        qCInfo(lcRedis).noquote() << message;
    }
    m_master = master;
    m_generation.fetch_add(1);
}

void SentinelMaster::startWatching()
{
    std::lock_guard stopLock(m_stopMutex);
    if (!m_stop && !m_watcher.joinable())
        m_watcher = std::thread([this] { watch(); });
}

bool SentinelMaster::waitForStop(milliseconds duration)
{
    std::unique_lock lock(m_stopMutex);
    return m_stopChanged.wait_for(lock, duration, [this] { return m_stop; });
}

// Subscribed to +switch-master on one Sentinel at a time. A message is
// "<name> <old-ip> <old-port> <new-ip> <new-port>". The socket is polled in short slices so
// that the destructor never waits longer than one slice.
void SentinelMaster::watch()
{
    const QList<HostPort> &sentinels = m_options.sentinels;
    for (int index = 0;; index = (index + 1) % int(sentinels.size())) {
        {
            std::lock_guard lock(m_stopMutex);
            if (m_stop)
                return;
        }
        auto context = openSentinel(sentinels.at(index), m_options);
        ReplyPtr subscribed;
        if (context.ok())
            subscribed = command(context.value().get(),
                                 {QByteArrayLiteral("SUBSCRIBE"), QByteArrayLiteral("+switch-master")});
        if (!context.ok() || !subscribed || subscribed->type == REDIS_REPLY_ERROR) {
            if (waitForStop(milliseconds(500)))
                return;
            continue;
        }
        redisContext *raw = context.value().get();
        for (;;) {
            {
                std::lock_guard lock(m_stopMutex);
                if (m_stop)
                    return;
            }
            pollfd watched{};
            watched.fd = raw->fd;
            watched.events = POLLIN;
            const int ready = ::poll(&watched, 1, 200);
            if (ready == 0)
                continue;
            if (ready < 0)
                break;
            void *message = nullptr;
            if (redisGetReply(raw, &message) != REDIS_OK)
                break; // the Sentinel went away: the next one
            ReplyPtr reply(static_cast<redisReply *>(message));
            if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 3
                || reply->element[2]->type != REDIS_REPLY_STRING)
                continue;
            const QStringList fields = replyText(reply->element[2]).split(u' ');
            if (fields.size() != 5 || fields.at(0) != m_options.masterName)
                continue;
            bool portOk = false;
            const int port = fields.at(4).toInt(&portOk);
            if (portOk)
                moveTo(HostPort{fields.at(3), port},
                       QStringLiteral("+switch-master from Sentinel %1").arg(sentinels.at(index).toString()));
        }
        if (waitForStop(milliseconds(100)))
            return;
    }
}

} // namespace payonce::redis
