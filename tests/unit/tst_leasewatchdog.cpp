#include "redis/leasewatchdog.h"

#include <QScopeGuard>
#include <QTest>

#include <atomic>
#include <condition_variable>
#include <mutex>

using namespace std::chrono_literals;
using payonce::core::Result;
using payonce::redis::Lease;
using payonce::redis::LeaseWatchdog;

/// The lease watchdog with an injected renew function (no store): what lost() promises.
class TestLeaseWatchdog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void renewalAnsweredAfterTheDeadlineDoesNotReviveTheLease()
    {
        // ttl 3 s: the first renewal is sent at ~1 s and answered "extended" only after
        // the deadline (3 s), yet before sent + ttl (4 s). The holder may have seen lost()
        // and rolled back in between: lost() must stay true, and renewals must stop.
        std::mutex mutex;
        std::condition_variable answer;
        bool mayAnswer = false;
        std::atomic<int> calls{0};
        std::atomic<bool> answered{false};
        auto renew = [&]() -> Result<bool> {
            if (calls.fetch_add(1) == 0) {
                std::unique_lock lock(mutex);
                answer.wait_for(lock, 10s, [&] { return mayAnswer; });
                answered.store(true);
            }
            return true;
        };
        auto letItAnswer = [&] {
            {
                std::lock_guard lock(mutex);
                mayAnswer = true;
            }
            answer.notify_all();
        };
        auto watchdog = std::make_shared<LeaseWatchdog>();
        auto lease = std::make_shared<Lease>(3000ms, renew, Lease::Clock::now());
        auto cleanup = qScopeGuard([&] {
            letItAnswer();
            watchdog->remove(lease);
            watchdog.reset();
        });
        watchdog->add(lease);

        QTRY_VERIFY_WITH_TIMEOUT(lease->lost(), 6000); // the deadline passed, the renewal hangs
        QCOMPARE(calls.load(), 1);
        letItAnswer();
        QTRY_VERIFY_WITH_TIMEOUT(answered.load(), 5000);
        QTest::qSleep(100); // the watchdog stores what the renewal said
        QVERIFY2(lease->lost(), "a renewal confirmed after the deadline revived a lost lease");
        QTest::qSleep(1500); // more than ttl/3: no renewal of a lost lease
        QVERIFY(lease->lost());
        QCOMPARE(calls.load(), 1);
    }

    void leaseIsKeptWhileRenewalsSucceed()
    {
        std::atomic<int> calls{0};
        auto watchdog = std::make_shared<LeaseWatchdog>();
        auto lease = std::make_shared<Lease>(
            300ms,
            [&]() -> Result<bool> {
                calls.fetch_add(1);
                return true;
            },
            Lease::Clock::now());
        watchdog->add(lease);
        QTest::qSleep(1000);
        QVERIFY(!lease->lost());
        QVERIFY(calls.load() >= 2);
        watchdog->remove(lease);
    }

    void refusedRenewalIsLostAtOnce()
    {
        std::atomic<int> calls{0};
        auto watchdog = std::make_shared<LeaseWatchdog>();
        auto lease = std::make_shared<Lease>(
            3000ms,
            [&]() -> Result<bool> {
                calls.fetch_add(1);
                return false;
            },
            Lease::Clock::now());
        watchdog->add(lease);
        QVERIFY(!lease->lost());
        QTRY_VERIFY_WITH_TIMEOUT(lease->lost(), 2500); // the first renewal (1 s), not the deadline (3 s)
        QTest::qSleep(200);
        QCOMPARE(calls.load(), 1);
        watchdog->remove(lease);
    }

    // A lease the watchdog finds lost is published as lock.lost (once, with what the
    // registry recorded); a lease released by its holder, or renewed, is not.
    void lostLeaseIsPublished()
    {
        std::mutex mutex;
        QList<payonce::StreamEvent> published;
        auto watchdog = std::make_shared<LeaseWatchdog>();
        watchdog->setLostSink([&](const payonce::StreamEvent &event) {
            std::lock_guard guard(mutex);
            published.append(event);
        });
        auto refused = std::make_shared<Lease>(
            600ms, []() -> Result<bool> { return false; }, Lease::Clock::now());
        auto renewed = std::make_shared<Lease>(
            600ms, []() -> Result<bool> { return true; }, Lease::Clock::now());
        auto released = std::make_shared<Lease>(
            600ms, []() -> Result<bool> { return false; }, Lease::Clock::now());
        watchdog->registry().record(QStringLiteral("lock:pay:P1"), QStringLiteral("agent-a:1"), 41,
                                    QStringLiteral("ORD1"), refused);
        watchdog->registry().record(QStringLiteral("lock:pay:P2"), QStringLiteral("agent-a:2"), 42,
                                    QStringLiteral("ORD2"), renewed);
        watchdog->registry().record(QStringLiteral("lock:pay:P3"), QStringLiteral("agent-a:3"), 43,
                                    QStringLiteral("ORD3"), released);
        for (const auto &lease : {refused, renewed, released})
            watchdog->add(lease);
        // Released by its holder before the first renewal (200 ms).
        watchdog->remove(released);
        released->released.store(true);
        released->markLost();

        QTRY_VERIFY_WITH_TIMEOUT(refused->lost(), 2000);
        QTest::qSleep(1000); // several renewals of the kept lease: nothing more is published
        QVERIFY(!renewed->lost());
        std::lock_guard guard(mutex);
        QCOMPARE(published.size(), qsizetype(1));
        const payonce::StreamEvent &event = published.first();
        QCOMPARE(event.kind, payonce::streamevent::LockLost);
        QCOMPARE(event.subject, QStringLiteral("lock:pay:P1"));
        QCOMPARE(event.value, QStringLiteral("lost"));
        QCOMPARE(event.actor, QStringLiteral("agent-a:1"));
        QVERIFY2(event.reason.contains(QStringLiteral("refused")), qPrintable(event.reason));
        QCOMPARE(event.detail.value(QStringLiteral("fencing_token")).toInteger(), 41);
        QCOMPARE(event.detail.value(QStringLiteral("fence_scope")).toString(), QStringLiteral("ORD1"));
        watchdog->remove(renewed);
        watchdog->remove(refused);
    }
};

QTEST_GUILESS_MAIN(TestLeaseWatchdog)
#include "tst_leasewatchdog.moc"
