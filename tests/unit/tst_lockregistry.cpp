#include "redis/embeddedkeystore.h"

#include <QTest>

using namespace std::chrono_literals;
using payonce::core::FenceEpochSource;
using payonce::core::LockView;
using payonce::core::Result;
using payonce::redis::EmbeddedKeyStore;

namespace {

class OneEpoch final : public FenceEpochSource {
public:
    Result<quint32> newEpoch(const QString &, const QString &) override { return quint32(7); }
    Result<quint32> largestEpoch() override { return quint32(7); }
};

QList<LockView> withKey(const QList<LockView> &locks, const QString &key)
{
    QList<LockView> found;
    for (const LockView &lock : locks) {
        if (lock.key == key)
            found.append(lock);
    }
    return found;
}

} // namespace

/// The lock registry behind GET /api/v1/locks, on the embedded store: what a store's
/// locks look like from its own process — held, released (gone), lost (kept) — and the
/// last fencing token per scope.
class TestLockRegistry : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void heldReleasedAndLost()
    {
        OneEpoch epochs;
        auto store = EmbeddedKeyStore::create(epochs);
        QVERIFY(store.ok());
        auto &locks = store.value()->locks();
        const auto &observer = store.value()->lockObserver();

        auto held = locks.acquire(QStringLiteral("lock:pay:P1"), 3000ms, QStringLiteral("ORD1"));
        QVERIFY(held.ok() && held.value());
        const QList<LockView> seen = withKey(observer.locks(), QStringLiteral("lock:pay:P1"));
        QCOMPARE(seen.size(), 1);
        QCOMPARE(seen.first().state, LockView::State::Held);
        QCOMPARE(seen.first().owner, held.value()->owner());
        QCOMPARE(seen.first().fencingToken, held.value()->fencingToken());
        QCOMPARE(seen.first().fenceScope, QStringLiteral("ORD1"));
        QVERIFY(seen.first().ttlLeftMs > 0 && seen.first().ttlLeftMs <= 3000);
        QCOMPARE(quint64(held.value()->fencingToken() >> 32), quint64(7)); // epoch · 2^32 + counter

        // A second holder of the same order: its token is the order's last one.
        auto second = locks.acquire(QStringLiteral("lock:order:ORD1"), 3000ms, QStringLiteral("ORD1"));
        QVERIFY(second.ok() && second.value());
        QCOMPARE(observer.lastFencingTokens().first().scope, QStringLiteral("ORD1"));
        QCOMPARE(observer.lastFencingTokens().first().token, second.value()->fencingToken());
        QCOMPARE(observer.lastFencingTokens().size(), 1);

        // Released: forgotten.
        QVERIFY(held.value()->release().ok());
        QVERIFY(withKey(observer.locks(), QStringLiteral("lock:pay:P1")).isEmpty());

        // A frozen holder's lease runs out: shown as lost, no ttl left.
        auto frozen = locks.acquire(QStringLiteral("lock:pay:P2"), 60ms, QStringLiteral("ORD2"));
        QVERIFY(frozen.ok() && frozen.value());
        frozen.value()->stopRenewingForTest();
        QTRY_VERIFY_WITH_TIMEOUT(frozen.value()->lost(), 10000);
        const QList<LockView> lost = withKey(observer.locks(), QStringLiteral("lock:pay:P2"));
        QCOMPARE(lost.size(), 1);
        QCOMPARE(lost.first().state, LockView::State::Lost);
        QCOMPARE(lost.first().ttlLeftMs, qint64(0));
        // Held ones come first.
        QCOMPARE(observer.locks().first().key, QStringLiteral("lock:order:ORD1"));
    }

    void renewalsAreCounted()
    {
        OneEpoch epochs;
        auto store = EmbeddedKeyStore::create(epochs);
        QVERIFY(store.ok());
        auto lock = store.value()->locks().acquire(QStringLiteral("lock:pay:R1"), 90ms);
        QVERIFY(lock.ok() && lock.value());
        QTRY_VERIFY_WITH_TIMEOUT(store.value()->lockObserver().locks().first().renewals >= 2, 10000);
        QCOMPARE(store.value()->lockObserver().locks().first().state, LockView::State::Held);
        QCOMPARE(store.value()->lockObserver().locks().first().fencingToken, quint64(0)); // no fence scope
        QVERIFY(store.value()->lockObserver().lastFencingTokens().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLockRegistry)
#include "tst_lockregistry.moc"
