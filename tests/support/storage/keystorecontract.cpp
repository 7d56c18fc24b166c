#include "keystorecontract.h"

#include <QElapsedTimer>
#include <QTest>
#include <QUuid>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using payonce::core::ErrorCode;

namespace payonce::tests {

namespace {

constexpr int Threads = 64;
// The shortest lease the contract uses: 3 x the Redis suite's 1 s command timeout, the
// floor the Redis store accepts (distributedlock.h).
constexpr auto ShortTtl = 3000ms;

#define PAYONCE_VERIFY_OK(result) QVERIFY2((result).ok(), (result).ok() ? "" : qPrintable(describe((result).error())))

} // namespace

QString KeyStoreContract::uniqueKey(const char *prefix)
{
    return QLatin1String(prefix) + QLatin1Char(':') + QUuid::createUuid().toString(QUuid::WithoutBraces);
}

QString KeyStoreContract::describe(const core::Error &error)
{
    return core::errorCodeName(error.code) + QStringLiteral(": ") + error.internalMessage;
}

bool KeyStoreContract::waitUntilReachable(core::KeyStore &store, int withinMs)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < withinMs) {
        if (store.ping().ok())
            return true;
        QTest::qSleep(50);
    }
    return false;
}

void KeyStoreContract::healthyStoreIsNotDegraded()
{
    auto pinged = store().ping();
    PAYONCE_VERIFY_OK(pinged);
    QVERIFY(!store().degraded());
    QVERIFY(!store().instanceId().isEmpty());
}

void KeyStoreContract::tokenIsConsumedOnce()
{
    const QString scope = uniqueKey("attempt");
    auto token = store().tokens().issue(scope, 60s);
    PAYONCE_VERIFY_OK(token);
    QCOMPARE(token->size(), 32); // 128 bits, hex
    auto other = store().tokens().issue(uniqueKey("attempt"), 60s);
    PAYONCE_VERIFY_OK(other);
    QVERIFY(token.value() != other.value());

    auto first = secondStore().tokens().consume(scope, token.value());
    PAYONCE_VERIFY_OK(first);
    QVERIFY(first.value());
    auto second = store().tokens().consume(scope, token.value());
    PAYONCE_VERIFY_OK(second);
    QVERIFY(!second.value());
}

void KeyStoreContract::tokenExpires()
{
    const QString scope = uniqueKey("attempt");
    auto token = store().tokens().issue(scope, 200ms);
    PAYONCE_VERIFY_OK(token);
    QTest::qSleep(600);
    auto consumed = store().tokens().consume(scope, token.value());
    PAYONCE_VERIFY_OK(consumed);
    QVERIFY2(!consumed.value(), "an expired token must not be consumable");
}

void KeyStoreContract::wrongTokenIsNotConsumed()
{
    const QString scope = uniqueKey("attempt");
    auto token = store().tokens().issue(scope, 60s);
    PAYONCE_VERIFY_OK(token);
    auto wrong = store().tokens().consume(scope, QStringLiteral("00000000000000000000000000000000"));
    PAYONCE_VERIFY_OK(wrong);
    QVERIFY(!wrong.value());
    auto unknownScope = store().tokens().consume(uniqueKey("attempt"), token.value());
    PAYONCE_VERIFY_OK(unknownScope);
    QVERIFY(!unknownScope.value());
    // A newer token replaces the older one for the scope.
    auto newer = store().tokens().issue(scope, 60s);
    PAYONCE_VERIFY_OK(newer);
    auto old = store().tokens().consume(scope, token.value());
    PAYONCE_VERIFY_OK(old);
    QVERIFY(!old.value());
    auto current = store().tokens().consume(scope, newer.value());
    PAYONCE_VERIFY_OK(current);
    QVERIFY(current.value());
}

void KeyStoreContract::concurrentConsumeHasExactlyOneWinner()
{
    constexpr int Rounds = 100;
    const QString scope = uniqueKey("attempt");
    std::vector<QString> tokens(Rounds);
    std::vector<std::atomic<int>> winners(Rounds);
    std::atomic<int> errors{0};
    QString firstError;
    std::mutex firstErrorMutex;
    std::barrier sync(Threads + 1);

    std::vector<std::thread> threads;
    for (int t = 0; t < Threads; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < Rounds; ++round) {
                sync.arrive_and_wait(); // the round's token is issued
                // Half the threads use the second store (a second agent), on Redis.
                core::KeyStore &mine = (t % 2) ? secondStore() : store();
                auto consumed = mine.tokens().consume(scope, tokens[round]);
                if (!consumed.ok()) {
                    if (errors.fetch_add(1) == 0) {
                        std::lock_guard lock(firstErrorMutex);
                        firstError = describe(consumed.error());
                    }
                } else if (consumed.value()) {
                    winners[round].fetch_add(1);
                }
                sync.arrive_and_wait(); // the round is over
            }
        });
    }
    bool issued = true;
    QString issueError;
    for (int round = 0; round < Rounds; ++round) {
        auto token = store().tokens().issue(scope, 60s);
        if (!token.ok() && issued) {
            issued = false;
            issueError = describe(token.error());
        }
        tokens[round] = token.ok() ? token.value() : QString();
        sync.arrive_and_wait();
        sync.arrive_and_wait();
    }
    for (auto &thread : threads)
        thread.join();

    QVERIFY2(issued, qPrintable(issueError));
    QVERIFY2(errors.load() == 0, qPrintable(firstError));
    for (int round = 0; round < Rounds; ++round)
        QVERIFY2(winners[round].load() == 1,
                 qPrintable(QStringLiteral("round %1: %2 winners").arg(round).arg(winners[round].load())));
}

void KeyStoreContract::lockIsExclusiveAndReleased()
{
    const QString key = uniqueKey("lock:order");
    auto first = store().locks().acquire(key, 10s);
    PAYONCE_VERIFY_OK(first);
    QVERIFY(first.value());
    QCOMPARE(first.value()->key(), key);
    QCOMPARE(first.value()->owner().size(), 32);
    QCOMPARE(first.value()->fencingToken(), quint64(0)); // no fence scope given
    QVERIFY(!first.value()->lost());

    auto second = secondStore().locks().acquire(key, 10s);
    PAYONCE_VERIFY_OK(second);
    QVERIFY2(!second.value(), "a held lock must not be acquired twice");

    auto released = first.value()->release();
    PAYONCE_VERIFY_OK(released);
    QVERIFY(released.value());
    auto again = first.value()->release();
    PAYONCE_VERIFY_OK(again);
    QVERIFY2(!again.value(), "a second release must not report a delete");

    auto third = secondStore().locks().acquire(key, 10s);
    PAYONCE_VERIFY_OK(third);
    QVERIFY2(third.value(), "a released lock must be free at once");
    QVERIFY(third.value()->owner() != first.value()->owner());
}

void KeyStoreContract::releaseIsOwnerChecked()
{
    const QString key = uniqueKey("lock:pay");
    {
        auto handle = store().locks().acquire(key, 10s);
        PAYONCE_VERIFY_OK(handle);
        QVERIFY(handle.value());
        // The handle dies without release(): its destructor releases (best effort).
    }
    auto next = store().locks().acquire(key, 10s);
    PAYONCE_VERIFY_OK(next);
    QVERIFY2(next.value(), "a destroyed handle must have released its lock");

    auto badTtl = store().locks().acquire(uniqueKey("lock:pay"), 1ms);
    QVERIFY(!badTtl.ok());
    QCOMPARE(badTtl.error().code, ErrorCode::InvalidInput);
}

void KeyStoreContract::concurrentLockHasAtMostOneHolder()
{
    constexpr int Acquisitions = 1000;
    const QString key = uniqueKey("lock:order");
    const QString order = uniqueKey("order");
    std::atomic<int> acquired{0};
    std::atomic<int> inCriticalSection{0};
    std::atomic<int> maxInCriticalSection{0};
    std::atomic<int> errors{0};
    std::atomic<int> notIncreasing{0};
    std::atomic<int> lostWhileHolding{0};
    std::atomic<int> releaseNotOurs{0};
    std::atomic<quint64> lastToken{0};
    QString firstError;
    std::mutex firstErrorMutex;
    std::barrier start(Threads);

    std::vector<std::thread> threads;
    for (int t = 0; t < Threads; ++t) {
        threads.emplace_back([&, t] {
            core::KeyStore &mine = (t % 2) ? secondStore() : store();
            start.arrive_and_wait();
            while (acquired.load() < Acquisitions) {
                auto handle = mine.locks().acquire(key, 10s, order);
                if (!handle.ok()) {
                    if (errors.fetch_add(1) == 0) {
                        std::lock_guard lock(firstErrorMutex);
                        firstError = describe(handle.error());
                    }
                    return;
                }
                if (!handle.value()) {
                    std::this_thread::yield();
                    continue;
                }
                const int inside = inCriticalSection.fetch_add(1) + 1;
                int seen = maxInCriticalSection.load();
                while (inside > seen && !maxInCriticalSection.compare_exchange_weak(seen, inside)) {
                }
                // The fenced resource: every holder's token must be above the last one.
                const quint64 token = handle.value()->fencingToken();
                const quint64 previous = lastToken.exchange(token);
                if (token <= previous)
                    notIncreasing.fetch_add(1);
                // Hold the critical section for a while, so a second holder would overlap.
                std::this_thread::sleep_for(1ms);
                if (handle.value()->lost())
                    lostWhileHolding.fetch_add(1);
                acquired.fetch_add(1);
                inCriticalSection.fetch_sub(1); // leave before the lock is released
                auto released = handle.value()->release();
                if (!released.ok()) {
                    if (errors.fetch_add(1) == 0) {
                        std::lock_guard lock(firstErrorMutex);
                        firstError = describe(released.error());
                    }
                    return;
                }
                if (!released.value())
                    releaseNotOurs.fetch_add(1);
            }
        });
    }
    for (auto &thread : threads)
        thread.join();

    QVERIFY2(errors.load() == 0, qPrintable(firstError));
    QVERIFY(acquired.load() >= Acquisitions);
    QVERIFY2(maxInCriticalSection.load() == 1,
             qPrintable(QStringLiteral("%1 holders at once").arg(maxInCriticalSection.load())));
    QCOMPARE(notIncreasing.load(), 0);
    QCOMPARE(lostWhileHolding.load(), 0);
    QCOMPARE(releaseNotOurs.load(), 0);
    qInfo("%d acquisitions by %d threads, at most %d holder(s) at once", acquired.load(), Threads,
          maxInCriticalSection.load());
}

void KeyStoreContract::watchdogKeepsLockOfLongHolder()
{
    const auto ttl = ShortTtl;
    const QString key = uniqueKey("lock:order");
    auto holder = store().locks().acquire(key, ttl);
    PAYONCE_VERIFY_OK(holder);
    QVERIFY(holder.value());

    // Work for 3 x ttl while a rival keeps trying.
    QElapsedTimer working;
    working.start();
    int rivalWins = 0;
    int attempts = 0;
    while (working.elapsed() < 3 * ttl.count()) {
        auto rival = secondStore().locks().acquire(key, ttl);
        PAYONCE_VERIFY_OK(rival);
        ++attempts;
        if (rival.value()) {
            ++rivalWins;
            (void)rival.value()->release();
        }
        QVERIFY2(!holder.value()->lost(), "the watchdog must keep the lease of a working holder");
        QTest::qSleep(100);
    }
    QCOMPARE(rivalWins, 0);
    QVERIFY(attempts > 10);
    auto released = holder.value()->release();
    PAYONCE_VERIFY_OK(released);
    QVERIFY2(released.value(), "the holder must still own its lock after 3 x ttl");
}

void KeyStoreContract::frozenHolderLosesLockAndLateReleaseSparesNewOwner()
{
    const auto ttl = ShortTtl;
    const QString key = uniqueKey("lock:pay");
    const QString order = uniqueKey("order");
    QElapsedTimer sinceAcquire;
    sinceAcquire.start();
    auto frozen = store().locks().acquire(key, ttl, order);
    PAYONCE_VERIFY_OK(frozen);
    QVERIFY(frozen.value());
    frozen.value()->stopRenewingForTest(); // GC pause, SIGSTOP: no more renewals

    std::unique_ptr<core::LockHandle> successor;
    while (!successor && sinceAcquire.elapsed() < 15000) {
        auto attempt = secondStore().locks().acquire(key, 10s, order);
        PAYONCE_VERIFY_OK(attempt);
        successor = std::move(attempt).value();
        if (!successor)
            QTest::qSleep(20);
    }
    const qint64 takenOverAfter = sinceAcquire.elapsed();
    QVERIFY2(successor, "the frozen holder's lock must expire after its ttl");
    QVERIFY2(takenOverAfter >= ttl.count() - 20,
             qPrintable(QStringLiteral("taken over after %1 ms, ttl %2 ms").arg(takenOverAfter).arg(ttl.count())));
    QVERIFY2(frozen.value()->lost(), "the frozen holder must learn that it lost the lock");
    QVERIFY(successor->fencingToken() > frozen.value()->fencingToken());

    // The late release of the frozen holder must not delete the successor's lock.
    auto late = frozen.value()->release();
    PAYONCE_VERIFY_OK(late);
    QVERIFY2(!late.value(), "a late release must report that the lock was no longer ours");
    // (With its fence scope: a key is always taken with the same one — in Redis Cluster the
    // lock is stored beside its scope's fence state.)
    auto third = store().locks().acquire(key, 10s, order);
    PAYONCE_VERIFY_OK(third);
    QVERIFY2(!third.value(), "the successor's lock must survive the late release");
    QVERIFY(!successor->lost());
    auto released = successor->release();
    PAYONCE_VERIFY_OK(released);
    QVERIFY(released.value());
}

void KeyStoreContract::fencingTokensStrictlyIncrease()
{
    const QString order = uniqueKey("order");
    quint64 previous = 0;
    for (int i = 0; i < 200; ++i) {
        core::KeyStore &mine = (i % 2) ? secondStore() : store();
        auto token = mine.fencing().next(order);
        PAYONCE_VERIFY_OK(token);
        QVERIFY2(token.value() > previous,
                 qPrintable(QStringLiteral("token %1 after %2").arg(token.value()).arg(previous)));
        QVERIFY2((token.value() >> 32) > 0, "the epoch half must be set");
        previous = token.value();
    }
    // Another order's tokens in between change nothing for this one.
    auto other = store().fencing().next(uniqueKey("order"));
    PAYONCE_VERIFY_OK(other);
    QVERIFY2((other.value() >> 32) > 0, "the epoch half must be set");
    auto after = secondStore().fencing().next(order);
    PAYONCE_VERIFY_OK(after);
    QVERIFY(after.value() > previous);
}

void KeyStoreContract::fencingTokenIsTakenWithTheLock()
{
    const QString order = uniqueKey("order");
    quint64 previous = 0;
    // Callback lock and confirm lock on the same order share the fenced resource.
    for (const char *kind : {"lock:pay", "lock:order", "lock:pay"}) {
        auto handle = store().locks().acquire(uniqueKey(kind), 10s, order);
        PAYONCE_VERIFY_OK(handle);
        QVERIFY(handle.value());
        QVERIFY(handle.value()->fencingToken() > previous);
        previous = handle.value()->fencingToken();
        auto released = handle.value()->release();
        PAYONCE_VERIFY_OK(released);
    }
}

void KeyStoreContract::idempotencyCacheRoundTrip()
{
    const QString user = uniqueKey("user");
    const QString key = uniqueKey("idem");
    auto miss = store().idempotency().get(user, key);
    PAYONCE_VERIFY_OK(miss);
    QVERIFY(!miss.value().has_value());

    const QByteArray body("{\"order_no\":\"ORD1\",\"code_url\":\"weixin://x\"}\0binary\xff", 52);
    auto put = store().idempotency().put(user, key, {QByteArrayLiteral("sha256:abc"), body}, 60s);
    PAYONCE_VERIFY_OK(put);
    auto hit = secondStore().idempotency().get(user, key);
    PAYONCE_VERIFY_OK(hit);
    QVERIFY(hit.value().has_value());
    QCOMPARE(hit.value()->fingerprint, QByteArrayLiteral("sha256:abc"));
    QCOMPARE(hit.value()->response, body);

    auto otherUser = store().idempotency().get(uniqueKey("user"), key);
    PAYONCE_VERIFY_OK(otherUser);
    QVERIFY2(!otherUser.value().has_value(), "keys are scoped by user");

    // put() again is idempotent: last write wins.
    auto again = store().idempotency().put(user, key, {QByteArrayLiteral("sha256:abc"), body}, 60s);
    PAYONCE_VERIFY_OK(again);
}

void KeyStoreContract::idempotencyCacheExpires()
{
    const QString user = uniqueKey("user");
    auto put = store().idempotency().put(user, QStringLiteral("k"), {QByteArrayLiteral("fp"), QByteArrayLiteral("r")},
                                         200ms);
    PAYONCE_VERIFY_OK(put);
    QTest::qSleep(600);
    auto gone = store().idempotency().get(user, QStringLiteral("k"));
    PAYONCE_VERIFY_OK(gone);
    QVERIFY(!gone.value().has_value());
}

void KeyStoreContract::seenProcessedSet()
{
    const QString payNo = uniqueKey("4200000001");
    const core::SeenPayment payment{uniqueKey("ORD"), QStringLiteral("PN-1"), 12800, QStringLiteral("CNY")};
    auto before = store().seenProcessed().seen(QStringLiteral("wechat"), payNo);
    PAYONCE_VERIFY_OK(before);
    QVERIFY(!before.value().processed);
    QVERIFY(!before.value().payment);
    auto marked = store().seenProcessed().markProcessed(QStringLiteral("wechat"), payNo, payment);
    PAYONCE_VERIFY_OK(marked);
    auto markedTwice = store().seenProcessed().markProcessed(QStringLiteral("wechat"), payNo, payment);
    PAYONCE_VERIFY_OK(markedTwice);
    // What the payment was comes back with it, here and on another agent on the same store.
    for (core::KeyStore *where : {&store(), &secondStore()}) {
        auto after = where->seenProcessed().seen(QStringLiteral("wechat"), payNo);
        PAYONCE_VERIFY_OK(after);
        QVERIFY2(after.value().processed, "another agent on the same store must see it too");
        QVERIFY(after.value().payment);
        QCOMPARE(after.value().payment->orderNo, payment.orderNo);
        QCOMPARE(after.value().payment->paymentNo, payment.paymentNo);
        QCOMPARE(after.value().payment->amountFen, payment.amountFen);
        QCOMPARE(after.value().payment->currency, payment.currency);
    }
    auto otherChannel = store().seenProcessed().seen(QStringLiteral("alipay"), payNo);
    PAYONCE_VERIFY_OK(otherChannel);
    QVERIFY(!otherChannel.value().processed);
}

// The key inspector sees the store itself: locks of both stores (two agents), each with its
// owner and time left; a released one is gone.
void KeyStoreContract::scanFindsEveryStoresLocks()
{
    auto mine = store().locks().acquire(uniqueKey("lock:pay"), 20s, uniqueKey("order"));
    PAYONCE_VERIFY_OK(mine);
    QVERIFY(mine.value());
    auto theirs = secondStore().locks().acquire(uniqueKey("lock:order"), 20s, uniqueKey("order"));
    PAYONCE_VERIFY_OK(theirs);
    QVERIFY(theirs.value());
    auto released = store().locks().acquire(uniqueKey("lock:pay"), 20s);
    PAYONCE_VERIFY_OK(released);
    QVERIFY(released.value());
    const QString releasedKey = released.value()->key();
    QVERIFY(released.value()->release().ok());

    const core::StoredLockScan scan = store().scanLocks(1000);
    QVERIFY2(scan.failures.isEmpty(), qPrintable(scan.failures.join(u'\n')));
    QVERIFY(!scan.nodes.isEmpty());
    int found = 0;
    for (const core::StoredLock &lock : scan.locks) {
        QVERIFY2(lock.key.startsWith(QLatin1String("lock:")), qPrintable(lock.key));
        QVERIFY2(lock.key != releasedKey, "a released lock is not in the store");
        for (const auto *handle : {mine.value().get(), theirs.value().get()}) {
            if (lock.key != handle->key())
                continue;
            ++found;
            QCOMPARE(lock.owner, handle->owner());
            QVERIFY2(lock.ttlLeftMs > 0 && lock.ttlLeftMs <= 20000, qPrintable(QString::number(lock.ttlLeftMs)));
        }
    }
    QCOMPARE(found, 2);
    QVERIFY(mine.value()->release().ok());
    QVERIFY(theirs.value()->release().ok());
}

} // namespace payonce::tests
