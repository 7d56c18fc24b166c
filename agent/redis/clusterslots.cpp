#include "clusterslots.h"

#include "hiredisclient.h"

#include <QLoggingCategory>
#include <QSet>
#include <QStringList>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <memory>

namespace payonce::redis {

Q_DECLARE_LOGGING_CATEGORY(lcRedis)

using config::HostPort;
using core::Error;
using core::ErrorCode;
using core::Result;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// A refresh asked for within this long of the last one is not made: the threads that all
// hit a dead master at once need one new map, not one each.
constexpr milliseconds kRefreshInterval{100};
// The map is asked again at least this often, so the masters an agent reports follow the
// cluster even where no call was redirected.
constexpr milliseconds kMaxMapAge{10000};

struct SlotAnswer {
    std::array<qint16, kClusterSlots> owners;
    QList<HostPort> nodes;
};

/// CLUSTER SLOTS of one node: each entry is [first, last, [ip, port, id…], replicas…]; an
/// empty ip means "the address you reached me at".
Result<SlotAnswer> askSlots(const HostPort &node, const RedisOptions &options)
{
    auto opened = openAuthenticated(node, options.connectTimeout, options.commandTimeout, options.username,
                                    options.password);
    if (!opened.ok())
        return opened.error();
    const ContextPtr context = std::move(opened).value();
    ReplyPtr reply = command(context.get(), {QByteArrayLiteral("CLUSTER"), QByteArrayLiteral("SLOTS")});
    if (!reply)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("CLUSTER SLOTS: %1").arg(errorOf(context.get())));
    if (reply->type == REDIS_REPLY_ERROR) {
        const QString text = replyText(reply.get());
        return Error::make(text.startsWith(QLatin1String("NOAUTH")) ? ErrorCode::Misconfigured : ErrorCode::Unavailable,
                           QStringLiteral("CLUSTER SLOTS: %1").arg(text));
    }
    if (reply->type != REDIS_REPLY_ARRAY)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("CLUSTER SLOTS: not an array"));
    SlotAnswer answer;
    answer.owners.fill(-1);
    for (size_t i = 0; i < reply->elements; ++i) {
        const redisReply *range = reply->element[i];
        if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 || range->element[0]->type != REDIS_REPLY_INTEGER
            || range->element[1]->type != REDIS_REPLY_INTEGER || range->element[2]->type != REDIS_REPLY_ARRAY
            || range->element[2]->elements < 2 || range->element[2]->element[1]->type != REDIS_REPLY_INTEGER)
            return Error::make(ErrorCode::Unavailable,
                               QStringLiteral("CLUSTER SLOTS: an entry is not [first, last, master…]"));
        const long long first = range->element[0]->integer;
        const long long last = range->element[1]->integer;
        if (first < 0 || last >= kClusterSlots || first > last)
            return Error::make(ErrorCode::Unavailable,
                               QStringLiteral("CLUSTER SLOTS: slots %1-%2").arg(first).arg(last));
        const redisReply *master = range->element[2];
        QString host = master->element[0]->type == REDIS_REPLY_STRING ? replyText(master->element[0]) : QString();
        if (host.isEmpty())
            host = node.host;
        const HostPort owner{host, int(master->element[1]->integer)};
        qsizetype index = answer.nodes.indexOf(owner);
        if (index < 0) {
            answer.nodes.append(owner);
            index = answer.nodes.size() - 1;
        }
        std::fill(answer.owners.begin() + first, answer.owners.begin() + last + 1, qint16(index));
    }
    if (answer.nodes.isEmpty())
        return Error::make(ErrorCode::Unavailable, QStringLiteral("CLUSTER SLOTS: no slot is served"));
    return answer;
}

QList<HostPort> sorted(QList<HostPort> nodes)
{
    std::sort(nodes.begin(), nodes.end(), [](const HostPort &a, const HostPort &b) {
        return a.host != b.host ? a.host < b.host : a.port < b.port;
    });
    return nodes;
}

} // namespace

ClusterSlotMap::ClusterSlotMap(const RedisOptions &options) : m_options(options)
{
    m_owner.fill(-1);
}

Result<HostPort> ClusterSlotMap::masterFor(int slot)
{
    bool stale = false;
    {
        std::lock_guard lock(m_mutex);
        stale = m_haveMap && Clock::now() - m_refreshedAt > kMaxMapAge;
    }
    if (stale) // a failover nobody's call ran into yet (a quiet agent) shows up here too
        refreshSoon();
    for (int attempt = 0;; ++attempt) {
        {
            std::lock_guard lock(m_mutex);
            const qint16 owner = m_owner.at(size_t(slot));
            if (owner >= 0)
                return m_nodes.at(owner);
            if (attempt > 0)
                return Error::make(ErrorCode::Unavailable,
                                   QStringLiteral("Redis Cluster: no master serves slot %1").arg(slot),
                                   QStringLiteral("the key store is unavailable"));
        }
        if (auto refreshed = refresh(); !refreshed.ok())
            return refreshed.error();
    }
}

void ClusterSlotMap::moved(int slot, const HostPort &master)
{
    record(slot, master);
    // One slot moved: others have likely moved with it (a failover moves all of a master's).
    refreshSoon();
}

void ClusterSlotMap::record(int slot, const HostPort &master)
{
    std::lock_guard lock(m_mutex);
    const QList<HostPort> before = mastersLocked();
    qsizetype index = m_nodes.indexOf(master);
    if (index < 0) {
        m_nodes.append(master);
        index = m_nodes.size() - 1;
    }
    m_owner.at(size_t(slot)) = qint16(index);
    if (mastersLocked() != before) {
        m_generation.fetch_add(1);
        m_switches.fetch_add(1);
        qCInfo(lcRedis).noquote()
            << QStringLiteral("Redis Cluster: slot %1 moved to %2").arg(slot).arg(master.toString());
    }
}

void ClusterSlotMap::refreshSoon()
{
    std::unique_lock refreshing(m_refreshing, std::try_to_lock);
    if (!refreshing.owns_lock())
        return; // another thread is asking right now
    {
        std::lock_guard lock(m_mutex);
        if (Clock::now() - m_refreshedAt < kRefreshInterval)
            return;
    }
    refreshing.unlock();
    (void)refresh();
}

Result<void> ClusterSlotMap::refresh()
{
    std::lock_guard refreshing(m_refreshing);
    QList<HostPort> candidates;
    {
        std::lock_guard lock(m_mutex);
        m_refreshedAt = Clock::now();
        if (m_lastAnswered)
            candidates << *m_lastAnswered;
        candidates << mastersLocked();
    }
    candidates << m_options.clusterSeeds;
    QList<HostPort> unique;
    for (const HostPort &candidate : candidates) {
        if (!unique.contains(candidate))
            unique << candidate;
    }
    QStringList said;
    int refusedUs = 0;
    for (const HostPort &node : unique) {
        auto answer = askSlots(node, m_options);
        if (!answer.ok()) {
            if (answer.error().code == ErrorCode::Misconfigured)
                ++refusedUs;
            said << node.toString() + QStringLiteral(": ") + answer.error().internalMessage;
            continue;
        }
        adopt(answer->owners, answer->nodes, node);
        return {};
    }
    const QString message =
        QStringLiteral("Redis Cluster: no node gave the slot map (%1)").arg(said.join(QStringLiteral("; ")));
    if (refusedUs > 0 && refusedUs == unique.size())
        return Error::make(ErrorCode::Misconfigured, message, QStringLiteral("the key store is misconfigured"));
    return Error::make(ErrorCode::Unavailable, message, QStringLiteral("the key store is unavailable"));
}

void ClusterSlotMap::adopt(const std::array<qint16, kClusterSlots> &owners, const QList<HostPort> &nodes,
                           const HostPort &answeredBy)
{
    std::lock_guard lock(m_mutex);
    const QList<HostPort> before = mastersLocked();
    // Re-index the answer onto m_nodes, which only grows (indexes stay valid).
    std::vector<qint16> translated(size_t(nodes.size()), qint16(-1));
    for (qsizetype i = 0; i < nodes.size(); ++i) {
        qsizetype index = m_nodes.indexOf(nodes.at(i));
        if (index < 0) {
            m_nodes.append(nodes.at(i));
            index = m_nodes.size() - 1;
        }
        translated.at(size_t(i)) = qint16(index);
    }
    for (size_t slot = 0; slot < owners.size(); ++slot)
        m_owner.at(slot) = owners.at(slot) >= 0 && size_t(owners.at(slot)) < translated.size()
                               ? translated.at(size_t(owners.at(slot)))
                               : qint16(-1);
    m_lastAnswered = answeredBy;
    const QList<HostPort> after = mastersLocked();
    if (after != before) {
        m_generation.fetch_add(1);
        QStringList names;
        for (const HostPort &master : after)
            names << master.toString();
        if (m_haveMap) {
            m_switches.fetch_add(1);
            qCWarning(lcRedis).noquote()
                << QStringLiteral("Redis Cluster: the masters are now %1").arg(names.join(u','));
        } else {
            qCInfo(lcRedis).noquote() << QStringLiteral("Redis Cluster: masters %1").arg(names.join(u','));
        }
    }
    m_haveMap = true;
}

QList<HostPort> ClusterSlotMap::masters() const
{
    std::lock_guard lock(m_mutex);
    return mastersLocked();
}

QList<HostPort> ClusterSlotMap::mastersLocked() const
{
    QSet<qint16> used;
    for (const qint16 owner : m_owner) {
        if (owner >= 0)
            used.insert(owner);
    }
    QList<HostPort> result;
    for (const qint16 index : used)
        result << m_nodes.at(index);
    return sorted(result);
}

} // namespace payonce::redis
