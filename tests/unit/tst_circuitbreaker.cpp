// The circuit breaker on a fake clock: failure rate over a sliding window with a minimum
// number of calls, cool-down, exactly N half-open probes, operator modes with expiry,
// and two breakers obeying one shared mode store.

#include "core/gateways/breakerregistry.h"
#include "core/gateways/circuitbreaker.h"
#include "core/ports/breakermodestore.h"
#include "core/ports/clock.h"
#include "fakes/fakeclock.h"
#include "fakes/fakemodestore.h"

#include <QTest>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace payonce::core;
using payonce::testsupport::FakeClock;
using payonce::testsupport::FakeModeStore;
using namespace std::chrono_literals;

namespace {

CircuitBreakerOptions options()
{
    CircuitBreakerOptions o;
    o.window = 10s;
    o.minimumCalls = 10;
    o.failureRateThreshold = 0.5;
    o.openCooldown = 30s;
    o.halfOpenProbes = 3;
    o.modeRefresh = 1s;
    return o;
}

void call(CircuitBreaker &breaker, bool success)
{
    const auto permit = breaker.tryAcquire();
    QVERIFY(permit);
    breaker.onResult(*permit, success);
}

void trip(CircuitBreaker &breaker)
{
    for (int i = 0; i < 10; ++i)
        call(breaker, false);
    QCOMPARE(breaker.state(), BreakerState::Open);
}

} // namespace

class TestCircuitBreaker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void failureRate_data()
    {
        QTest::addColumn<int>("successes");
        QTest::addColumn<int>("failures");
        QTest::addColumn<BreakerState>("expected");
        QTest::newRow("all good") << 20 << 0 << BreakerState::Closed;
        QTest::newRow("below the rate (4 of 10)") << 6 << 4 << BreakerState::Closed;
        QTest::newRow("at the rate (5 of 10)") << 5 << 5 << BreakerState::Open;
        QTest::newRow("above the rate") << 2 << 8 << BreakerState::Open;
        QTest::newRow("all failing, below the minimum calls (9)") << 0 << 9 << BreakerState::Closed;
        QTest::newRow("minimum reached by the 10th call") << 0 << 10 << BreakerState::Open;
    }
    void failureRate()
    {
        QFETCH(int, successes);
        QFETCH(int, failures);
        QFETCH(BreakerState, expected);
        FakeClock clock;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, nullptr, options());
        for (int i = 0; i < successes; ++i)
            call(breaker, true);
        for (int i = 0; i < failures; ++i)
            call(breaker, false);
        QCOMPARE(breaker.state(), expected);
    }

    void oldFailuresSlideOutOfTheWindow()
    {
        FakeClock clock;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, nullptr, options());
        for (int i = 0; i < 9; ++i)
            call(breaker, false);
        clock.advance(11s); // the nine failures are now older than the window
        call(breaker, false);
        QCOMPARE(breaker.state(), BreakerState::Closed);
        QCOMPARE(breaker.snapshot().calls, 1);
        for (int i = 0; i < 9; ++i)
            call(breaker, true);
        QCOMPARE(breaker.state(), BreakerState::Closed);
        QCOMPARE(breaker.snapshot().failureRate, 0.1);
    }

    void openFailsFastUntilTheCooldown()
    {
        FakeClock clock;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, nullptr, options());
        trip(breaker);
        QVERIFY(!breaker.tryAcquire());
        clock.advance(29s);
        QVERIFY(!breaker.tryAcquire());
        clock.advance(1s);
        QCOMPARE(breaker.state(), BreakerState::HalfOpen);
    }

    void halfOpenAdmitsExactlyNProbesToConcurrentCallers()
    {
        FakeClock clock;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, nullptr, options());
        trip(breaker);
        clock.advance(30s);
        std::atomic<int> admitted{0};
        std::atomic<int> refused{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (int i = 0; i < 32; ++i) {
            threads.emplace_back([&] {
                while (!go.load()) {
                }
                (breaker.tryAcquire() ? admitted : refused).fetch_add(1);
            });
        }
        go = true;
        for (auto &t : threads)
            t.join();
        QCOMPARE(admitted.load(), 3);
        QCOMPARE(refused.load(), 29);
    }

    void probeOutcome_data()
    {
        QTest::addColumn<QList<bool>>("probes");
        QTest::addColumn<BreakerState>("expected");
        QTest::newRow("all probes succeed: closed") << QList<bool>{true, true, true} << BreakerState::Closed;
        QTest::newRow("first probe fails: open") << QList<bool>{false} << BreakerState::Open;
        QTest::newRow("last probe fails: open") << QList<bool>{true, true, false} << BreakerState::Open;
        QTest::newRow("two of three so far: still half-open") << QList<bool>{true, true} << BreakerState::HalfOpen;
    }
    void probeOutcome()
    {
        QFETCH(QList<bool>, probes);
        QFETCH(BreakerState, expected);
        FakeClock clock;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, nullptr, options());
        trip(breaker);
        clock.advance(30s);
        QList<BreakerPermit> permits;
        for (int i = 0; i < probes.size(); ++i) {
            const auto permit = breaker.tryAcquire();
            QVERIFY(permit);
            QVERIFY(permit->probe);
            permits.append(*permit);
        }
        for (int i = 0; i < probes.size(); ++i)
            breaker.onResult(permits.at(i), probes.at(i));
        QCOMPARE(breaker.state(), expected);
        if (expected == BreakerState::Open) {
            QVERIFY(!breaker.tryAcquire()); // a new cool-down started
            clock.advance(30s);
            QCOMPARE(breaker.state(), BreakerState::HalfOpen);
        }
    }

    void resultsFromAnEarlierStateAreIgnored()
    {
        FakeClock clock;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, nullptr, options());
        const auto slow = breaker.tryAcquire(); // admitted while closed, answers late
        QVERIFY(slow);
        trip(breaker);
        clock.advance(30s);
        QCOMPARE(breaker.state(), BreakerState::HalfOpen);
        breaker.onResult(*slow, false); // not a probe of this half-open: no reopening
        QCOMPARE(breaker.state(), BreakerState::HalfOpen);
    }

    void operatorModes_data()
    {
        QTest::addColumn<BreakerMode>("mode");
        QTest::addColumn<bool>("tripped");
        QTest::addColumn<bool>("admittedWhileForced");
        QTest::newRow("forced_open on a healthy breaker") << BreakerMode::ForcedOpen << false << false;
        QTest::newRow("forced_closed on an open breaker") << BreakerMode::ForcedClosed << true << true;
        QTest::newRow("auto is auto") << BreakerMode::Auto << false << true;
    }
    void operatorModes()
    {
        QFETCH(BreakerMode, mode);
        QFETCH(bool, tripped);
        QFETCH(bool, admittedWhileForced);
        FakeClock clock;
        FakeModeStore modes;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, &modes, options());
        if (tripped)
            trip(breaker);
        QVERIFY(
            modes
                .set(QStringLiteral("gateway.wechat"), {mode, QStringLiteral("alice"), QStringLiteral("incident 42"),
                                                        clock.nowMs(), clock.nowMs() + 600'000})
                .ok());
        clock.advance(1s); // the refresh interval
        QCOMPARE(bool(breaker.tryAcquire()), admittedWhileForced);
        const BreakerSnapshot snapshot = breaker.snapshot();
        QCOMPARE(snapshot.effectiveMode, mode);
        QCOMPARE(snapshot.mode.actor, QStringLiteral("alice"));
        if (mode == BreakerMode::ForcedClosed) {
            for (int i = 0; i < 20; ++i)
                call(breaker, false); // not counted: the operator decided
            QVERIFY(breaker.tryAcquire());
        }
        clock.advance(600s); // the expiry: auto again
        QCOMPARE(breaker.snapshot().effectiveMode, BreakerMode::Auto);
        QCOMPARE(breaker.snapshot().mode.mode, BreakerMode::Auto);
        // auto again: the failure-rate state decides (a tripped breaker's cool-down is over)
        QCOMPARE(breaker.state(), tripped ? BreakerState::HalfOpen : BreakerState::Closed);
    }

    void modeIsReadAtMostOncePerRefreshInterval()
    {
        FakeClock clock;
        FakeModeStore modes;
        CircuitBreaker breaker(QStringLiteral("gateway.wechat"), clock, &modes, options());
        for (int i = 0; i < 50; ++i)
            (void)breaker.tryAcquire();
        QCOMPARE(modes.reads(), 1);
        clock.advance(1s);
        (void)breaker.tryAcquire();
        QCOMPARE(modes.reads(), 2);
    }

    void twoAgentsObeyOneOperator()
    {
        FakeClock clock;
        FakeModeStore shared;
        BreakerRegistry agentA(clock, shared, nullptr, options());
        BreakerRegistry agentB(clock, shared, nullptr, options());
        CircuitBreaker &a = agentA.breaker(QStringLiteral("gateway.alipay"));
        CircuitBreaker &b = agentB.breaker(QStringLiteral("gateway.alipay"));
        QVERIFY(a.tryAcquire());
        QVERIFY(b.tryAcquire());

        QVERIFY(agentA
                    .setMode(QStringLiteral("gateway.alipay"), BreakerMode::ForcedOpen, QStringLiteral("alice"),
                             QStringLiteral("platform incident"), 600s)
                    .ok());
        QVERIFY(!a.tryAcquire()); // at once on the agent that wrote it
        clock.advance(1s);
        QVERIFY(!b.tryAcquire()); // within the refresh interval on the other
        QCOMPARE(b.snapshot().mode.reason, QStringLiteral("platform incident"));

        QVERIFY(agentB
                    .setMode(QStringLiteral("gateway.alipay"), BreakerMode::Auto, QStringLiteral("bob"),
                             QStringLiteral("resolved"), 0s)
                    .ok());
        clock.advance(1s);
        QVERIFY(a.tryAcquire());
        QVERIFY(b.tryAcquire());
        QVERIFY(!agentA
                     .setMode(QStringLiteral("nope"), BreakerMode::ForcedOpen, QStringLiteral("alice"),
                              QStringLiteral("x"), 0s)
                     .ok());
    }
};

QTEST_GUILESS_MAIN(TestCircuitBreaker)
#include "tst_circuitbreaker.moc"
