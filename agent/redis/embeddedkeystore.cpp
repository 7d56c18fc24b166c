#include "embeddedkeystore.h"

#include "boundedseenset.h"
#include "leasewatchdog.h"
#include "randombytes.h"

#include <QHash>

#include <mutex>

namespace payonce::redis {

using core::Error;
using core::ErrorCode;
using core::Result;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

/// The key space: values with an optional expiry, expired lazily on access and swept
/// every so many writes so that memory stays bounded by the live keys.
class Space {
public:
    struct Entry {
        QByteArray value;
        QByteArray second; // the response body of an L1 entry
        Clock::time_point expiresAt = Clock::time_point::max();
    };

    // All members: call with mutex held.
    Entry *find(const QString &key)
    {
        auto found = m_entries.find(key);
        if (found == m_entries.end())
            return nullptr;
        if (found->expiresAt <= Clock::now()) {
            m_entries.erase(found);
            return nullptr;
        }
        return &found.value();
    }

    void put(const QString &key, Entry entry)
    {
        m_entries.insert(key, std::move(entry));
        if (++m_writesSinceSweep >= 4096) {
            m_writesSinceSweep = 0;
            const auto now = Clock::now();
            m_entries.removeIf([now](const auto &it) { return it.value().expiresAt <= now; });
        }
    }

    bool remove(const QString &key) { return m_entries.remove(key) > 0; }

    /// The live entries whose key starts with `prefix`, at most `limit` (+1 to tell there
    /// are more), with the time each has left (-1: none).
    std::vector<core::StoredLock> withPrefix(const QString &prefix, int limit)
    {
        std::vector<core::StoredLock> found;
        const auto now = Clock::now();
        for (auto it = m_entries.cbegin(); it != m_entries.cend() && int(found.size()) <= limit; ++it) {
            if (!it.key().startsWith(prefix) || it.value().expiresAt <= now)
                continue;
            const qint64 left =
                it.value().expiresAt == Clock::time_point::max()
                    ? -1
                    : std::chrono::duration_cast<std::chrono::milliseconds>(it.value().expiresAt - now).count();
            found.push_back(core::StoredLock{it.key(), it.key(), QString(), QString::fromUtf8(it.value().value), left});
        }
        return found;
    }

    std::mutex mutex;

private:
    QHash<QString, Entry> m_entries;
    int m_writesSinceSweep = 0;
};

} // namespace

class EmbeddedKeyStore::Private final : public core::TokenStore,
                                        public core::DistributedLock,
                                        public core::FencingTokens,
                                        public core::IdempotencyCache,
                                        public core::SeenProcessedSet {
public:
    Private(QString id, quint32 startEpoch, const Options &options)
        : instanceId(std::move(id)), epoch(startEpoch), space(std::make_shared<Space>()),
          watchdog(std::make_shared<LeaseWatchdog>()),
          seenPayments(options.seenProcessedCapacity, options.seenProcessedTtl)
    {
    }

    Result<QString> issue(const QString &scope, milliseconds ttl) override
    {
        auto token = randomHex(16);
        if (!token.ok())
            return token.error();
        std::lock_guard lock(space->mutex);
        space->put(QStringLiteral("token:") + scope, {token.value().toUtf8(), {}, Clock::now() + ttl});
        return token;
    }

    Result<bool> consume(const QString &scope, const QString &token) override
    {
        const QString key = QStringLiteral("token:") + scope;
        std::lock_guard lock(space->mutex);
        const auto *entry = space->find(key);
        if (!entry || entry->value != token.toUtf8())
            return false;
        space->remove(key);
        return true;
    }

    Result<std::unique_ptr<core::LockHandle>> acquire(const QString &key, milliseconds ttl,
                                                      const QString &fenceScope) override
    {
        if (ttl < milliseconds(30))
            return Error::make(ErrorCode::InvalidInput,
                               QStringLiteral("a lock ttl of %1 ms is too short to renew").arg(ttl.count()));
        auto ownerText = randomHex(16);
        if (!ownerText.ok())
            return ownerText.error();
        const QByteArray owner = ownerText.value().toUtf8();
        const auto acquiredAt = Clock::now();
        quint64 token = 0;
        {
            std::lock_guard lock(space->mutex);
            if (space->find(key))
                return std::unique_ptr<core::LockHandle>();
            space->put(key, {owner, {}, acquiredAt + ttl});
            if (!fenceScope.isEmpty())
                token = nextLocked(fenceScope);
        }

        std::weak_ptr<Space> weakSpace = space;
        auto renewFunction = [weakSpace, key, owner, ttl]() -> Result<bool> {
            const auto shared = weakSpace.lock();
            if (!shared)
                return false; // the store is gone, and its locks with it
            std::lock_guard lock(shared->mutex);
            auto *entry = shared->find(key);
            if (!entry || entry->value != owner)
                return false;
            entry->expiresAt = Clock::now() + ttl;
            return true;
        };
        auto releaseFunction = [weakSpace, key, owner]() -> Result<bool> {
            const auto shared = weakSpace.lock();
            if (!shared)
                return false;
            std::lock_guard lock(shared->mutex);
            const auto *entry = shared->find(key);
            if (!entry || entry->value != owner)
                return false;
            shared->remove(key);
            return true;
        };
        auto lease = std::make_shared<Lease>(ttl, std::move(renewFunction), acquiredAt);
        watchdog->add(lease);
        return std::unique_ptr<core::LockHandle>(std::make_unique<LeaseHandle>(
            key, ownerText.value(), token, fenceScope, watchdog, std::move(lease), std::move(releaseFunction)));
    }

    Result<quint64> next(const QString &scope) override
    {
        std::lock_guard lock(space->mutex);
        return nextLocked(scope);
    }

    quint64 nextLocked(const QString &scope)
    {
        // Counters never expire; 2^32 tokens per order per agent start is out of reach.
        const quint64 counter = ++fenceCounters[scope];
        return (quint64(epoch) << 32) | (counter & 0xFFFFFFFFULL);
    }

    Result<std::optional<core::CachedResponse>> get(const QString &scope, const QString &key) override
    {
        std::lock_guard lock(space->mutex);
        const auto *entry = space->find(idemKey(scope, key));
        if (!entry)
            return std::optional<core::CachedResponse>();
        return std::optional<core::CachedResponse>(core::CachedResponse{entry->value, entry->second});
    }

    Result<void> put(const QString &scope, const QString &key, const core::CachedResponse &response,
                     milliseconds ttl) override
    {
        std::lock_guard lock(space->mutex);
        space->put(idemKey(scope, key), {response.fingerprint, response.response, Clock::now() + ttl});
        return {};
    }

    Result<void> markProcessed(const QString &channel, const QString &payNo, const core::SeenPayment &payment) override
    {
        seenPayments.insert(channel + QLatin1Char(':') + payNo, payment.encoded());
        return {};
    }

    Result<core::SeenEntry> seen(const QString &channel, const QString &payNo) override
    {
        const auto value = seenPayments.find(channel + QLatin1Char(':') + payNo);
        if (!value)
            return core::SeenEntry{};
        return core::SeenEntry{true, core::SeenPayment::decode(*value)};
    }

    // The whole set is in this process: seen() is memory already, and its miss is the answer.
    std::optional<core::SeenEntry> seenInMemory(const QString &channel, const QString &payNo) override
    {
        return seen(channel, payNo).value();
    }

    static QString idemKey(const QString &scope, const QString &key)
    {
        return QStringLiteral("idem:") + scope + QLatin1Char(':') + key;
    }

    const QString instanceId;
    const quint32 epoch;
    std::shared_ptr<Space> space;
    QHash<QString, quint64> fenceCounters; // under space->mutex
    std::shared_ptr<LeaseWatchdog> watchdog;
    BoundedSeenSet seenPayments;
};

Result<std::unique_ptr<EmbeddedKeyStore>> EmbeddedKeyStore::create(core::FenceEpochSource &epochs,
                                                                   const Options &options)
{
    auto random = randomHex(16);
    if (!random.ok())
        return random.error();
    const QString id = QStringLiteral("embedded-") + random.value();
    auto epoch = epochs.newEpoch(id, QStringLiteral("embedded_start"));
    if (!epoch.ok())
        return epoch.error();
    return std::unique_ptr<EmbeddedKeyStore>(
        new EmbeddedKeyStore(std::make_unique<Private>(id, epoch.value(), options)));
}

EmbeddedKeyStore::EmbeddedKeyStore(std::unique_ptr<Private> dd) : d(std::move(dd))
{
}
EmbeddedKeyStore::~EmbeddedKeyStore() = default;

core::TokenStore &EmbeddedKeyStore::tokens()
{
    return *d;
}
core::DistributedLock &EmbeddedKeyStore::locks()
{
    return *d;
}
core::FencingTokens &EmbeddedKeyStore::fencing()
{
    return *d;
}
core::IdempotencyCache &EmbeddedKeyStore::idempotency()
{
    return *d;
}
const core::LockObserver &EmbeddedKeyStore::lockObserver() const
{
    return d->watchdog->registry();
}
void EmbeddedKeyStore::setLockLostSink(core::EventSink sink)
{
    d->watchdog->setLostSink(std::move(sink));
}
core::SeenProcessedSet &EmbeddedKeyStore::seenProcessed()
{
    return *d;
}

QString EmbeddedKeyStore::instanceId() const
{
    return d->instanceId;
}

core::KeyStoreTopology EmbeddedKeyStore::topology() const
{
    return core::KeyStoreTopology{QStringLiteral("embedded"), QString(), d->epoch, 0};
}

core::StoredLockScan EmbeddedKeyStore::scanLocks(int limit)
{
    core::StoredLockScan scan;
    scan.nodes << QStringLiteral("embedded");
    {
        std::lock_guard lock(d->space->mutex);
        scan.locks = d->space->withPrefix(QStringLiteral("lock:"), limit);
    }
    if (int(scan.locks.size()) > limit) {
        scan.locks.resize(size_t(limit));
        scan.truncated = true;
    }
    return scan;
}

} // namespace payonce::redis
