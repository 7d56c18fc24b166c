// RetryPolicy: which errors are retried, how many attempts, how the waits grow, and the
// jitter's bounds — with an injected sleep, so nothing waits.

#include "core/gateways/retrypolicy.h"

#include <QTest>

using namespace payonce::core;
using namespace std::chrono_literals;

Q_DECLARE_METATYPE(payonce::core::ErrorCode)

namespace {
RetryOptions options()
{
    RetryOptions o;
    o.maxAttempts = 4;
    o.initialBackoff = 100ms;
    o.multiplier = 2;
    o.maxBackoff = 1000ms;
    o.jitter = 0.2;
    return o;
}
} // namespace

class TestRetryPolicy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void retryable_data()
    {
        QTest::addColumn<ErrorCode>("code");
        QTest::addColumn<int>("expectedCalls");
        QTest::newRow("unavailable: retried to the bound") << ErrorCode::Unavailable << 4;
        QTest::newRow("bad signature: retried to the bound") << ErrorCode::BadSignature << 4;
        QTest::newRow("invalid input: once") << ErrorCode::InvalidInput << 1;
        QTest::newRow("conflict: once") << ErrorCode::Conflict << 1;
        QTest::newRow("misconfigured: once") << ErrorCode::Misconfigured << 1;
        QTest::newRow("busy: once (not a gateway error)") << ErrorCode::Busy << 1;
    }
    void retryable()
    {
        QFETCH(ErrorCode, code);
        QFETCH(int, expectedCalls);
        QList<std::chrono::milliseconds> sleeps;
        RetryPolicy policy(
            options(), [&](std::chrono::milliseconds d) { sleeps.append(d); }, [] { return 0.5; });
        int calls = 0;
        Result<int> result = policy.run<int>([&]() -> Result<int> {
            ++calls;
            return Error::make(code, QStringLiteral("nope"));
        });
        QVERIFY(!result.ok());
        QCOMPARE(result.error().code, code);
        QCOMPARE(calls, expectedCalls);
        QCOMPARE(sleeps.size(), expectedCalls - 1);
    }

    void successEndsTheRetries()
    {
        int calls = 0;
        RetryPolicy policy(
            options(), [](std::chrono::milliseconds) {}, [] { return 0.5; });
        Result<int> result = policy.run<int>([&]() -> Result<int> {
            if (++calls < 3)
                return Error::make(ErrorCode::Unavailable, QStringLiteral("timeout"));
            return 42;
        });
        QVERIFY(result.ok());
        QCOMPARE(result.value(), 42);
        QCOMPARE(calls, 3);
    }

    void backoffGrows_data()
    {
        QTest::addColumn<int>("attempt");
        QTest::addColumn<int>("expectedMs"); // with the jitter's midpoint (unit 0.5)
        QTest::newRow("after 1st") << 1 << 100;
        QTest::newRow("after 2nd") << 2 << 200;
        QTest::newRow("after 3rd") << 3 << 400;
        QTest::newRow("after 4th") << 4 << 800;
        QTest::newRow("capped") << 5 << 1000;
        QTest::newRow("still capped") << 30 << 1000;
    }
    void backoffGrows()
    {
        QFETCH(int, attempt);
        QFETCH(int, expectedMs);
        RetryPolicy policy(options());
        QCOMPARE(policy.backoffFor(attempt, 0.5).count(), qint64(expectedMs));
    }

    void jitterStaysWithinBounds_data()
    {
        QTest::addColumn<int>("attempt");
        QTest::addColumn<int>("lowMs");
        QTest::addColumn<int>("highMs");
        QTest::newRow("100 ms +-20%") << 1 << 80 << 120;
        QTest::newRow("400 ms +-20%") << 3 << 320 << 480;
        QTest::newRow("capped at 1000") << 10 << 800 << 1000;
    }
    void jitterStaysWithinBounds()
    {
        QFETCH(int, attempt);
        QFETCH(int, lowMs);
        QFETCH(int, highMs);
        RetryPolicy policy(options());
        QCOMPARE(policy.backoffFor(attempt, 0.0).count(), qint64(lowMs));
        qint64 seenLow = highMs, seenHigh = lowMs;
        for (int i = 0; i < 1000; ++i) {
            const qint64 wait = policy.backoffFor(attempt, double(i) / 1000.0).count();
            QVERIFY(wait >= lowMs && wait <= highMs);
            seenLow = std::min(seenLow, wait);
            seenHigh = std::max(seenHigh, wait);
        }
        QVERIFY(seenHigh > seenLow); // it does vary
    }

    void defaultRandomJittersWithinBounds()
    {
        QList<std::chrono::milliseconds> sleeps;
        RetryPolicy policy(options(), [&](std::chrono::milliseconds d) { sleeps.append(d); });
        (void)policy.run<int>([]() -> Result<int> { return Error::make(ErrorCode::Unavailable, QStringLiteral("x")); });
        QCOMPARE(sleeps.size(), 3);
        const QList<std::pair<int, int>> bounds{{80, 120}, {160, 240}, {320, 480}};
        for (int i = 0; i < 3; ++i)
            QVERIFY(sleeps.at(i).count() >= bounds.at(i).first && sleeps.at(i).count() <= bounds.at(i).second);
    }
};

QTEST_GUILESS_MAIN(TestRetryPolicy)
#include "tst_retrypolicy.moc"
