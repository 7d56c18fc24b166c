// core::LogThrottle: one line per interval, the rest counted and reported with the next.

#include "core/common/logthrottle.h"

#include <QTest>

#include <atomic>
#include <thread>
#include <vector>

using payonce::core::LogThrottle;
using namespace std::chrono_literals;

class TestLogThrottle : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void onePerIntervalWithTheCountHeldBack()
    {
        LogThrottle throttle(1000ms);
        qint64 heldBack = -1;
        QVERIFY(throttle.admit(5000, &heldBack)); // the first at once
        QCOMPARE(heldBack, qint64(0));
        for (qint64 t = 5001; t < 6000; t += 100)
            QVERIFY(!throttle.admit(t, &heldBack));
        QVERIFY(throttle.admit(6000, &heldBack)); // a whole interval later
        QCOMPARE(heldBack, qint64(10));
        QVERIFY(!throttle.admit(6999, &heldBack));
        QVERIFY(throttle.admit(60000, &heldBack)); // after a quiet spell: at once
        QCOMPARE(heldBack, qint64(1));
    }

    // 8 threads, 1 000 occurrences each at one instant: one line, 7 999 held back — none
    // lost to a race, none logged twice.
    void concurrentOccurrencesAreCountedOnce()
    {
        LogThrottle throttle(1000ms);
        std::atomic<int> logged{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&] {
                qint64 heldBack = 0;
                for (int i = 0; i < 1000; ++i) {
                    if (throttle.admit(100, &heldBack))
                        logged.fetch_add(1);
                }
            });
        }
        for (auto &thread : threads)
            thread.join();
        QCOMPARE(logged.load(), 1);
        qint64 heldBack = -1;
        QVERIFY(throttle.admit(1100, &heldBack));
        QCOMPARE(heldBack, qint64(7999));
    }
};

QTEST_GUILESS_MAIN(TestLogThrottle)
#include "tst_logthrottle.moc"
