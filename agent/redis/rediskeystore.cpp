#include "rediskeystore.h"

#include "keystoreconnection_p.h"

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

using namespace keystore;

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

    // The front only: a miss there may be an entry another agent wrote, which only Redis knows.
    std::optional<core::SeenEntry> seenInMemory(const QString &channel, const QString &payNo) override
    {
        if (const auto front = seenFront.find(channel + QLatin1Char(':') + payNo))
            return core::SeenEntry{true, core::SeenPayment::decode(*front)};
        return std::nullopt;
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
