// Three agents on one PostgreSQL database and a Redis Cluster (three masters, each with a
// replica: docs/design.md "Redis topologies"). A storm of 1 000 orders × 5 copies; in its
// first part one master is SIGKILLed and the cluster promotes its replica; the killed node
// comes back (empty, a replica) and the second part is paid on the new map. Then by SQL:
// every order PAID once with one of each effect, nothing lost (PaidOnceReport); every change
// of an order's fence went up; the orders of the killed master's slots paid after the
// failover carry an epoch above every epoch handed out before the kill; every agent names
// the new masters. Last, the key inspector of one agent finds a stuck lock on each master.

#include "agentcluster.h"
#include "agentfixture.h"
#include "callbackstorm.h"
#include "failoverstorm.h"
#include "verifyprinting.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr int kAgents = 3;
constexpr int kOrders = 1000;
constexpr int kFirstPart = 600; // the failover happens while it is delivered
constexpr int kFailoverMs = 30000;
constexpr int kSettleMs = 90000;
const QString kPrefix = QStringLiteral("CLUS-");

QString masterLabel(const QList<int> &ports)
{
    QStringList masters;
    for (const int port : ports)
        masters << QStringLiteral("127.0.0.1:%1").arg(port);
    return QStringLiteral("payonce_redis_topology{mode=\"cluster\",master=\"%1\"}").arg(masters.join(u','));
}

} // namespace

class TestRedisFailoverCluster : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        m_cluster = startStormCluster(AgentCluster::Redis::Cluster, kAgents, &error);
        QVERIFY2(m_cluster, qPrintable(error));
    }

    void masterFailoverMidStorm()
    {
        RedisClusterTopology &redis = m_cluster->redisCluster();
        const QList<int> mastersBefore = redis.masterPorts();
        QCOMPARE(mastersBefore.size(), qsizetype(3));
        QElapsedTimer made;
        made.start();
        QString error;
        const auto notifications = m_cluster->paidOrders(kPrefix, kOrders, &error);
        QVERIFY2(notifications.size() == kOrders, qPrintable(error));
        qInfo("%d orders made, confirmed and paid at the simulator in %lld ms", kOrders, made.elapsed());

        // Which master serves each order of the second part now (an order's locks and fence
        // state sit in its slot): those on the master about to die are paid, after the
        // failover, on the replica promoted in its place.
        const int victim = mastersBefore.first();
        QStringList victimsOrders;
        for (int i = kFirstPart; i < kOrders; ++i) {
            const QString order = kPrefix + QStringLiteral("%1").arg(i, 4, 10, QLatin1Char('0'));
            const int master = redis.masterPortForKey(u'{' + order + u'}');
            QVERIFY(master > 0);
            if (master == victim)
                victimsOrders << order;
        }
        QVERIFY2(victimsOrders.size() > 50, qPrintable(QString::number(victimsOrders.size())));

        // Part one: a master dies under the storm; the cluster promotes its replica.
        CallbackStorm first(notifications.mid(0, kFirstPart), m_cluster->agentPorts(), {});
        first.start();
        QVERIFY(waitForProgress(first, 0.3));
        QElapsedTimer failover;
        failover.start();
        QVERIFY2(whileProcessingEvents([&] { return redis.kill(victim, &error); }), qPrintable(error));
        const qint64 killedAt = first.postsAnswered();
        const qint64 epochBeforeKill = count("SELECT COALESCE(MAX(epoch), 0) FROM fence_epochs");
        const int promoted = whileProcessingEvents([&] { return redis.waitForFailover(victim, kFailoverMs, &error); });
        PAYONCE_VERIFY_PRINTING(promoted > 0, error + u'\n' + redis.logTail());
        qInfo("master %d killed after %lld of %lld POSTs (largest epoch then %lld); %d promoted %lld ms later, at POST "
              "%lld",
              victim, killedAt, first.firstRoundPosts(), epochBeforeKill, promoted, failover.elapsed(),
              first.postsAnswered());
        PAYONCE_VERIFY_PRINTING(whileProcessingEvents([&] { return redis.restartKilled(victim, kFailoverMs, &error); }),
                                error + u'\n' + redis.logTail());
        const CallbackStorm::Report one = first.waitProcessingEvents();

        // Part two, on the new map: the killed node is a replica now.
        const QList<int> mastersAfter = redis.masterPorts();
        QVERIFY(mastersAfter.contains(promoted) && !mastersAfter.contains(victim));
        CallbackStorm second(notifications.mid(kFirstPart), m_cluster->agentPorts(), {});
        const CallbackStorm::Report two = second.runProcessingEvents();
        qInfo("storm, first part: %s", qPrintable(one.describe()));
        qInfo("storm, second part: %s", qPrintable(two.describe()));
        QVERIFY2(one.acknowledged == kFirstPart, qPrintable(one.describe()));
        QVERIFY2(two.acknowledged == kOrders - kFirstPart, qPrintable(two.describe()));

        // 0 double effects, 0 lost payments, every order PAID once; no token written is lower
        // than an earlier one for the same order, and each fenced effect carries its order's
        // token.
        FenceHistory history;
        verifyStormOutcome(*m_cluster, kPrefix, kOrders, one.posts + two.posts, kSettleMs, &history);
        if (QTest::currentTestFailed())
            return;

        // The epochs strictly increase: the promoted replica's copy of each slot's state was
        // installed by another process, so every order of the killed master's slots paid
        // under a lock after the failover carries an epoch above every epoch handed out
        // before the kill. Paid under a lock: its stock_log row carries the token. (The
        // order's own fence is not the witness: an order paid with no lock keeps the token
        // its confirm wrote before the kill.)
        const QString inList = u'\'' + victimsOrders.join(QStringLiteral("','")) + u'\'';
        const qint64 fencedAfter = count(qPrintable(
            QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no IN (%1) AND fence <> 0").arg(inList)));
        const qint64 lowestAfter = count(qPrintable(
            QStringLiteral(
                "SELECT COALESCE(MIN(fence / 4294967296), 0) FROM stock_log WHERE order_no IN (%1) AND fence <> 0")
                .arg(inList)));
        QVERIFY2(fencedAfter > 0, "no order of the killed master's slots was paid under a lock after the failover");
        QVERIFY2(lowestAfter > epochBeforeKill,
                 qPrintable(QStringLiteral("the killed master's orders paid after the failover from epoch %1; %2 was "
                                           "handed out before the kill")
                                .arg(lowestAfter)
                                .arg(epochBeforeKill)));
        const qint64 otherRun = count(qPrintable(QStringLiteral("SELECT COUNT(*) FROM fence_epochs WHERE reason = "
                                                                "'other_run_id' AND epoch > %1")
                                                     .arg(epochBeforeKill)));
        QVERIFY2(otherRun > 0, "no epoch was installed for a promoted replica's state");
        const qint64 unfenced = count("SELECT COUNT(*) FROM stock_log WHERE order_no LIKE ? AND fence = 0", kPrefix);
        qInfo(
            "%lld fence changes, none down; %lld epochs handed out (%lld for a promoted replica's state); the killed "
            "master's %lld orders of part two: %lld paid under a lock, from epoch %lld (above %lld); %lld orders paid "
            "with no lock while a master was unreachable (%lld of them the killed master's of part two)",
            history.changes, count("SELECT COUNT(*) FROM fence_epochs"), otherRun, qint64(victimsOrders.size()),
            fencedAfter, lowestAfter, epochBeforeKill, unfenced,
            count(qPrintable(
                QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no IN (%1) AND fence = 0").arg(inList))));

        // Every agent names the masters as they are now.
        for (int i = 0; i < kAgents; ++i) {
            QVERIFY2(pollUntil([&] { return m_cluster->metric(i, masterLabel(mastersAfter)) == 1.0; }, 10000),
                     qPrintable(QStringLiteral("agent-%1 does not name %2").arg(i + 1).arg(masterLabel(mastersAfter))));
            const double switches = m_cluster->metric(i, QStringLiteral("payonce_redis_master_switches_total"));
            QVERIFY2(switches >= 1,
                     qPrintable(QStringLiteral("agent-%1 saw %2 master changes").arg(i + 1).arg(switches)));
        }
    }

    // A lock left with no expiry (a hand-written SET, a script that died half-way) blocks its
    // payment's lock for ever: the key inspector of any agent finds it, on whichever master
    // holds it.
    void inspectorFindsAStuckLockOnEveryMaster()
    {
        RedisClusterTopology &redis = m_cluster->redisCluster();
        QMap<QString, int> stuckOn; // stored key -> master port
        for (const int master : redis.masterPorts()) {
            QString key;
            for (int n = 0; key.isEmpty() && n < 1000; ++n) {
                const QString candidate = QStringLiteral("{stuck-%1}lock:pay:%2").arg(n).arg(4200000000 + n);
                if (redis.masterPortForKey(candidate) == master)
                    key = candidate;
            }
            QVERIFY(!key.isEmpty());
            QCOMPARE(redis.cli(master, {QStringLiteral("SET"), key, QStringLiteral("owner-gone")}), QByteArray("OK"));
            stuckOn.insert(key, master);
        }
        const HttpAnswer answer = m_cluster->agent(1).call("GET", QStringLiteral("/api/v1/locks/keys"), {}, kView);
        QCOMPARE(answer.status, 200);
        const QJsonObject scan = answer.json();
        QVERIFY2(scan.value(QStringLiteral("failures")).toArray().isEmpty(), answer.body.constData());
        QCOMPARE(scan.value(QStringLiteral("nodes")).toArray().size(), qsizetype(3));
        QCOMPARE(scan.value(QStringLiteral("stuck")).toInt(), 3);
        int found = 0;
        for (const QJsonValue &value : scan.value(QStringLiteral("locks")).toArray()) {
            const QJsonObject lock = value.toObject();
            const QString stored = lock.value(QStringLiteral("stored_key")).toString();
            if (!stuckOn.contains(stored))
                continue;
            ++found;
            QCOMPARE(lock.value(QStringLiteral("node")).toString(),
                     QStringLiteral("127.0.0.1:%1").arg(stuckOn.value(stored)));
            QCOMPARE(lock.value(QStringLiteral("stuck")).toBool(), true);
            QCOMPARE(lock.value(QStringLiteral("stuck_reason")).toString(), QStringLiteral("no_expiry"));
            QCOMPARE(lock.value(QStringLiteral("ttl_left_ms")).toInteger(), qint64(-1));
            QVERIFY(lock.value(QStringLiteral("key")).toString().startsWith(QLatin1String("lock:pay:42")));
        }
        QCOMPARE(found, 3);
        QStringList nodes;
        for (const QJsonValue &node : scan.value(QStringLiteral("nodes")).toArray())
            nodes << node.toString();
        qInfo("the inspector of agent-2 scanned %s: %d locks, the 3 stuck ones among them",
              qPrintable(nodes.join(u',')), int(scan.value(QStringLiteral("locks")).toArray().size()));
    }

private:
    qint64 count(const char *sql, const QString &prefix = {})
    {
        return countWithPrefix(m_cluster->database(), sql, prefix);
    }

    std::unique_ptr<AgentCluster> m_cluster;
};

QTEST_GUILESS_MAIN(TestRedisFailoverCluster)
#include "tst_redisfailover_cluster.moc"
