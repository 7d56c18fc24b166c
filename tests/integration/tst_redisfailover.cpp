// Three agents on one PostgreSQL database and a Sentinel-monitored Redis (a master, a
// replica, three Sentinels: docs/design.md "Redis topologies"). A storm of 1 000 orders ×
// 5 copies; in its first part the master is SIGKILLed and Sentinel promotes the replica;
// the old node comes back empty as a replica, in the storm's second part it is promoted
// again (a failback), and the third part is paid through it. Then by SQL: every order PAID once with one of each effect,
// nothing lost (PaidOnceReport); every change of an order's fence (a trigger records them)
// went up, never down; the epoch in force rose at the failover and again at the failback,
// and the tokens written follow it; and every agent followed the master there and back.

#include "agentcluster.h"
#include "callbackstorm.h"
#include "failoverstorm.h"
#include "verifyprinting.h"

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr int kAgents = 3;
constexpr int kOrders = 1000;
// The failover happens while the first part is delivered, the failback while the second is;
// the third goes to the master failed back to.
constexpr int kFirstPart = 500;
constexpr int kSecondPart = 400;
constexpr int kFailoverMs = 30000;
constexpr int kSettleMs = 90000;
const QString kPrefix = QStringLiteral("SENT-");

} // namespace

class TestRedisFailover : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        m_cluster = startStormCluster(AgentCluster::Redis::Sentinel, kAgents, &error);
        QVERIFY2(m_cluster, qPrintable(error));
    }

    void failoverAndFailbackMidStorm()
    {
        RedisSentinelTopology &redis = m_cluster->sentinel();
        const int firstMaster = redis.masterPort();
        QVERIFY(firstMaster > 0);
        const qint64 epochsBefore = count("SELECT COUNT(*) FROM fence_epochs");
        QElapsedTimer made;
        made.start();
        QString error;
        const auto notifications = m_cluster->paidOrders(kPrefix, kOrders, &error);
        QVERIFY2(notifications.size() == kOrders, qPrintable(error));
        qInfo("%d orders made, confirmed and paid at the simulator in %lld ms", kOrders, made.elapsed());

        const double epochFirst = highestEpochInForce();
        QVERIFY(epochFirst >= 1);

        // Part one: the master dies under the storm; Sentinel promotes the replica.
        CallbackStorm first(notifications.mid(0, kFirstPart), m_cluster->agentPorts(), {});
        first.start();
        QVERIFY(waitForProgress(first, 0.3));
        QElapsedTimer failover;
        failover.start();
        const int killed = whileProcessingEvents([&] { return redis.killMaster(&error); });
        QVERIFY2(killed == firstMaster, qPrintable(error));
        const qint64 killedAt = first.postsAnswered();
        const int promoted = whileProcessingEvents([&] { return redis.waitForFailover(killed, kFailoverMs, &error); });
        PAYONCE_VERIFY_PRINTING(promoted > 0, error + u'\n' + redis.logTail());
        qInfo("master %d killed after %lld of %lld POSTs; %d promoted %lld ms later, at POST %lld", killed, killedAt,
              first.firstRoundPosts(), promoted, failover.elapsed(), first.postsAnswered());
        PAYONCE_VERIFY_PRINTING(whileProcessingEvents([&] { return redis.restartKilled(kFailoverMs, &error); }),
                                error + u'\n' + redis.logTail());

        // Part two, on the promoted replica: the old node (now its replica) is promoted back
        // while the storm runs.
        CallbackStorm second(notifications.mid(kFirstPart, kSecondPart), m_cluster->agentPorts(), {});
        second.start();
        QVERIFY(waitForProgress(second, 0.1));
        // Every agent works on the promoted replica under a larger epoch.
        QVERIFY2(everyAgentsEpochAbove(epochFirst), "an agent kept the first master's epoch");
        const double epochPromoted = highestEpochInForce();
        QElapsedTimer failback;
        failback.start();
        const int back = whileProcessingEvents([&] { return redis.failover(kFailoverMs, &error); });
        PAYONCE_VERIFY_PRINTING(back == killed, error + u'\n' + redis.logTail());
        qInfo("failback to %d in %lld ms, at POST %lld of %lld of the second part", back, failback.elapsed(),
              second.postsAnswered(), second.firstRoundPosts());

        const CallbackStorm::Report one = first.waitProcessingEvents();
        const CallbackStorm::Report two = second.waitProcessingEvents();
        // Part three, on the master failed back to.
        CallbackStorm third(notifications.mid(kFirstPart + kSecondPart), m_cluster->agentPorts(), {});
        const CallbackStorm::Report three = third.runProcessingEvents();
        QVERIFY2(everyAgentsEpochAbove(epochPromoted), "an agent kept the promoted replica's epoch after the failback");
        const double epochFailedBack = highestEpochInForce();
        qInfo("storm, first part: %s", qPrintable(one.describe()));
        qInfo("storm, second part: %s", qPrintable(two.describe()));
        qInfo("storm, third part: %s", qPrintable(three.describe()));
        QVERIFY2(one.acknowledged == kFirstPart, qPrintable(one.describe()));
        QVERIFY2(two.acknowledged == kSecondPart, qPrintable(two.describe()));
        QVERIFY2(three.acknowledged == kOrders - kFirstPart - kSecondPart, qPrintable(three.describe()));

        // 0 double effects, 0 lost payments, every order PAID once; no token written is lower
        // than an earlier one for the same order, and each fenced effect carries its order's
        // token (the write that made it).
        FenceHistory history;
        verifyStormOutcome(*m_cluster, kPrefix, kOrders, one.posts + two.posts + three.posts, kSettleMs, &history);
        if (QTest::currentTestFailed())
            return;
        // The epochs strictly increase: the epoch in force went up at the failover and again at
        // the failback (above), and the tokens written follow: every order of the third part,
        // paid through the failed-back master, carries an epoch above the promoted replica's.
        const qint64 thirdPartLowest = count("SELECT MIN(fence / 4294967296) FROM orders WHERE order_no LIKE ? "
                                             "AND order_no >= 'SENT-0900'",
                                             kPrefix);
        QVERIFY2(double(thirdPartLowest) > epochPromoted,
                 qPrintable(QStringLiteral("epochs in force %1, %2, %3; the third part's orders from epoch %4")
                                .arg(epochFirst)
                                .arg(epochPromoted)
                                .arg(epochFailedBack)
                                .arg(thirdPartLowest)));
        const qint64 epochsAfter = count("SELECT COUNT(*) FROM fence_epochs");
        const qint64 unfenced = count("SELECT COUNT(*) FROM stock_log WHERE order_no LIKE ? AND fence = 0", kPrefix);
        qInfo("%lld fence changes, none down; epochs in force %.0f, after the failover %.0f, after the failback %.0f; "
              "handed out %lld -> %lld (%s); %lld orders paid with no lock while no master was reachable",
              history.changes, epochFirst, epochPromoted, epochFailedBack, epochsBefore, epochsAfter,
              qPrintable(firstValueText(m_cluster->database(),
                                        QStringLiteral("SELECT string_agg(epoch || ':' || reason, ', ' ORDER BY epoch) "
                                                       "FROM fence_epochs"))),
              unfenced);

        // Every agent followed the master there and back.
        const QString master =
            QStringLiteral("payonce_redis_topology{mode=\"sentinel\",master=\"127.0.0.1:%1\"}").arg(back);
        for (int i = 0; i < kAgents; ++i) {
            QVERIFY2(pollUntil([&] { return m_cluster->metric(i, master) == 1.0; }, 10000),
                     qPrintable(QStringLiteral("agent-%1 does not name %2 as its master").arg(i + 1).arg(back)));
            const double switches = m_cluster->metric(i, QStringLiteral("payonce_redis_master_switches_total"));
            QVERIFY2(switches >= 2,
                     qPrintable(QStringLiteral("agent-%1 saw %2 master switches").arg(i + 1).arg(switches)));
        }
    }

private:
    /// The largest payonce_redis_fence_epoch among the agents (the epoch in force on the
    /// master each last reached).
    double highestEpochInForce()
    {
        double highest = 0;
        for (int i = 0; i < kAgents; ++i)
            highest = std::max(highest, m_cluster->metric(i, QStringLiteral("payonce_redis_fence_epoch")));
        return highest;
    }

    bool everyAgentsEpochAbove(double epoch)
    {
        return pollUntil(
            [&] {
                for (int i = 0; i < kAgents; ++i) {
                    if (m_cluster->metric(i, QStringLiteral("payonce_redis_fence_epoch")) <= epoch)
                        return false;
                }
                return true;
            },
            20000);
    }

    qint64 count(const char *sql, const QString &prefix = {})
    {
        return countWithPrefix(m_cluster->database(), sql, prefix);
    }

    std::unique_ptr<AgentCluster> m_cluster;
};

QTEST_GUILESS_MAIN(TestRedisFailover)
#include "tst_redisfailover.moc"
