// Several agents on one database and one Redis, with one payonce-sim that outlives them
// (docs/design.md, "Scale-out"), on PostgreSQL and MariaDB: every notification delivered as 5
// simultaneous copies spread over 3 agents (and once also through nginx with the shipped
// config), then the same storm with an agent killed, Redis killed and restarted empty,
// the database stopped for 5 s, and an agent frozen past its lock lease. After each, the
// invariants are read by SQL (PaidOnceReport): every order the platform settled is PAID
// exactly once, with one of each effect, nothing lost, the outbox drained with nothing
// dead. Last, the agent's own QA scenarios with all three agents as targets, their SQL
// report cross-checked by the test's.

#include "agentcluster.h"
#include "agentfixture.h"
#include "callbackstorm.h"
#include "paidonceinvariants.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <functional>
#include <mutex>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr int kAgents = 3;
constexpr int kStormOrders = 1000;     // 3 agents, 1 000 orders, 5 copies each
constexpr int kChaosOrders = 200;      // mid-storm chaos needs a storm, not a long one
constexpr int kSettleMs = 90000;       // lock lease (10 s) + worker age (5 s) + outbox, with room
constexpr qint64 kLockLeaseMs = 10000; // the callback pipeline's pay-lock TTL (its default)
using Headers = QList<QPair<QByteArray, QByteArray>>;
const QString kConfirmsAnswered = QStringLiteral(
    "payonce_requests_total{endpoint=\"/api/v1/payments/confirm\",outcome=\"2xx\"}");

qint64 epochOf(qint64 fence)
{
    return fence >> 32;
}

} // namespace

class TestMultiAgent : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QElapsedTimer started;
        started.start();
        m_cluster = AgentCluster::start(dialectUnderTest(), kAgents, &error);
        QVERIFY2(m_cluster, qPrintable(error));
        qInfo("%d agents, payonce-sim, redis-server and %s up in %lld ms", kAgents,
              qPrintable(dialectName(dialectUnderTest())), started.elapsed());
    }

    // The check itself: it holds on a clean run and names the order of an effect injected
    // by raw SQL (an extra points entry, an extra coupon), and only that order.
    void invariantCheckCatchesAnInjectedEffect()
    {
        const QString prefix = QStringLiteral("INV-");
        const auto notifications = paidOrders(prefix, 10);
        QCOMPARE(notifications.size(), 10);
        CallbackStorm storm(notifications, m_cluster->agentPorts(), {});
        const CallbackStorm::Report delivered = storm.runProcessingEvents();
        QVERIFY2(delivered.acknowledged == 10, qPrintable(delivered.describe()));
        QVERIFY(waitSettled(prefix, 10));
        const PaidOnceReport clean = checkPaidOnce(m_cluster->database(), prefix, 10);
        QVERIFY2(clean.holds(), qPrintable(clean.describe()));

        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QVERIFY(
            execSql(m_cluster->database(),
                    QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
                                   "VALUES (?, 5003, 'reward-injected', 100, 0, ?)"),
                    {QStringLiteral("INV-0003"), now})
                .ok());
        QVERIFY(execSql(m_cluster->database(),
                        QStringLiteral(
                            "INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, created_at, "
                            "updated_at) VALUES (?, 5007, 'INJECTED', 'active', 0, ?, ?)"),
                        {QStringLiteral("INV-0007"), now, now})
                    .ok());
        const PaidOnceReport broken = checkPaidOnce(m_cluster->database(), prefix, 10);
        qInfo("%s", qPrintable(broken.describe()));
        QVERIFY(!broken.holds());
        QCOMPARE(broken.violations, QStringList({QStringLiteral("INV-0003: 2 point_log rows, owed exactly 1"),
                                                 QStringLiteral("INV-0007: 2 user_coupon rows, owed exactly 1")}));
        // A settled order the database never stored is lost too.
        QVERIFY(!checkPaidOnce(m_cluster->database(), prefix, 11).holds());
    }

    void thousandOrdersFiveCopiesAcrossThreeAgents()
    {
        const QString prefix = QStringLiteral("STORM-");
        QElapsedTimer made;
        made.start();
        const auto notifications = paidOrders(prefix, kStormOrders);
        QCOMPARE(notifications.size(), kStormOrders);
        qInfo("%d orders made, confirmed and paid at the simulator in %lld ms", kStormOrders, made.elapsed());

        CallbackStorm storm(notifications, m_cluster->agentPorts(), {});
        const CallbackStorm::Report delivered = storm.runProcessingEvents();
        qInfo("storm: %s", qPrintable(delivered.describe()));
        QVERIFY2(delivered.acknowledged == kStormOrders, qPrintable(delivered.describe()));
        const PaidOnceReport report = settledReport(prefix, kStormOrders);
        QVERIFY2(report.holds(), qPrintable(report.describe()));
        // Every copy reached an agent and was recorded with the layer that decided it.
        QCOMPARE(report.deliveries, delivered.posts);
        QCOMPARE(m_cluster->stockLeft(prefix), qint64(10));
        printPerAgent(prefix);
    }

    // The same storm with nginx (the shipped config, TLS) as a fourth target in front of
    // the three agents: copies through nginx and straight to the agents at one instant.
    void stormThroughNginxAndDirect()
    {
        QString error;
        QVERIFY2(m_cluster->startNginx(&error), qPrintable(error));
        const QString prefix = QStringLiteral("NGINX-");
        const auto notifications = paidOrders(prefix, kChaosOrders);
        QCOMPARE(notifications.size(), kChaosOrders);
        CallbackStorm::Options options;
        options.tlsPorts = {m_cluster->nginx()->port()};
        options.caCertificate = m_cluster->nginx()->certificatePath();
        CallbackStorm storm(notifications, m_cluster->agentPorts() << m_cluster->nginx()->port(), options);
        const CallbackStorm::Report delivered = storm.runProcessingEvents();
        qInfo("storm: %s", qPrintable(delivered.describe()));
        QVERIFY2(
            delivered.acknowledged == kChaosOrders && delivered.answersByStatus.value(200) == delivered.posts,
            qPrintable(delivered.describe() + u'\n' + QString::fromUtf8(m_cluster->nginx()->logText().right(2000))));
        const PaidOnceReport report = settledReport(prefix, kChaosOrders);
        QVERIFY2(report.holds(), qPrintable(report.describe()));
        QCOMPARE(report.deliveries, delivered.posts);
        QCOMPARE(m_cluster->stockLeft(prefix), qint64(10));
    }

    // agent-3 holds pay locks (PAYONCE_TEST_PAUSE_AT=after_lock_until_lost) and is frozen by
    // SIGSTOP; its leases run out, the other agents' workers pay those orders under newer
    // fencing tokens; thawed, its late writes carry the old tokens and the database refuses
    // them (payonce_stale_fence_refused_total on agent-3).
    //
    // The first copy of kHeld orders goes to agent-3 alone, before any other agent has one:
    // the locks it then holds were taken while those orders were unpaid, so each of them
    // can only be paid under a newer token and every one of its late writes must be refused.
    // (Copies that reach agent-3 in the storm may find their order paid and its lock free
    // already: a lock taken after the payment carries a newer token than the order's, and
    // the state machine answers it, not the fence — the clean-clone run that saw 2 late
    // holders and no refusal.)
    void agentPausedPastItsLease()
    {
        const QString prefix = QStringLiteral("PAUSE-");
        constexpr int kOrders = 60;
        constexpr int kHeld = 4; // agent-3's callback threads (http.callback_threads' default)
        QString error;
        QVERIFY2(m_cluster->startAgent(2, {QStringLiteral("PAYONCE_TEST_PAUSE_AT=after_lock_until_lost")}, &error),
                 qPrintable(error));
        const auto notifications = paidOrders(prefix, kOrders);
        QCOMPARE(notifications.size(), kOrders);
        AgentProcess &frozen = m_cluster->agent(2);
        static const QRegularExpression holding(QStringLiteral("holding the lock of (\\S+) until it is lost"));
        const auto heldPayNos = [&frozen] {
            QSet<QString> payNos;
            const QString output = frozen.output();
            for (auto it = holding.globalMatch(output); it.hasNext();)
                payNos.insert(it.next().captured(1));
            return payNos;
        };
        CallbackStorm::Options toAgent3Options;
        toAgent3Options.copies = 1;
        toAgent3Options.concurrentNotifications = kHeld;
        toAgent3Options.requestTimeoutMs = 2000; // frozen, agent-3 answers nothing
        toAgent3Options.deadlineMs = 2500;       // one POST each: the storm below sends them again
        CallbackStorm toAgent3(notifications.mid(0, kHeld), {frozen.port()}, toAgent3Options);
        toAgent3.start();
        QTRY_VERIFY2_WITH_TIMEOUT(heldPayNos().size() == kHeld, qPrintable(frozen.output()), 60000);
        const QSet<QString> heldFirst = heldPayNos();
        QCOMPARE(::kill(pid_t(frozen.pid()), SIGSTOP), 0);
        QElapsedTimer frozenFor;
        frozenFor.start();
        CallbackStorm::Options options;
        options.requestTimeoutMs = 2000; // a frozen agent answers nothing: the platform gives up on that POST
        options.concurrentNotifications = 12;
        CallbackStorm storm(notifications, m_cluster->agentPorts(), options);
        storm.start();
        // Whatever fails below, agent-3 is thawed: the next tests talk to it.
        auto thaw = qScopeGuard([&frozen] { ::kill(pid_t(frozen.pid()), SIGCONT); });
        // The frozen agent's orders are paid by the others once its leases have run out —
        // all of them, unless the SIGSTOP caught one of agent-3's threads inside a
        // transaction: its row locks hold that order back until agent-3 is thawed (a
        // clean-clone run on MariaDB saw 59 of 60). So: frozen past the lease, until all are
        // paid or 30 s past the lease (the others' workers take a row 5 s old), then thawed,
        // then all must be paid. (Not the whole settle time: the test function's 300 s must
        // hold the storm's retries and the settling after the thaw too.)
        const bool allPaidWhileFrozen = QTest::qWaitFor(
            [&] {
                return frozenFor.elapsed() > kLockLeaseMs + 2000
                       && checkPaidOnce(m_cluster->database(), prefix, kOrders).paid == kOrders;
            },
            int(kLockLeaseMs) + 30000);
        const qint64 paidWhileFrozen = checkPaidOnce(m_cluster->database(), prefix, kOrders).paid;
        QVERIFY2(frozenFor.elapsed() > kLockLeaseMs, "agent-3 was not frozen past its lease");
        QCOMPARE(::kill(pid_t(frozen.pid()), SIGCONT), 0);
        thaw.dismiss();
        qInfo("agent-3 frozen for %lld ms (lock lease 10 s); %lld of %d orders paid meanwhile%s", frozenFor.elapsed(),
              paidWhileFrozen, kOrders, allPaidWhileFrozen ? "" : ", the rest held by its open transaction");
        (void)toAgent3.waitProcessingEvents();
        const CallbackStorm::Report delivered = storm.waitProcessingEvents();
        qInfo("storm: %s", qPrintable(delivered.describe()));
        QVERIFY2(delivered.acknowledged == kOrders, qPrintable(delivered.describe()));
        QTRY_COMPARE_WITH_TIMEOUT(checkPaidOnce(m_cluster->database(), prefix, kOrders).paid, qint64(kOrders),
                                  kSettleMs);

        // What agent-3 logged of the payments it held, for the messages below.
        const auto heldPaymentsLog = [&frozen, &heldPayNos] {
            const QSet<QString> payNos = heldPayNos();
            QStringList lines;
            for (const QString &line : frozen.output().split(u'\n')) {
                if (line.contains(u"test hook") || line.contains(u"stale fencing")
                    || std::any_of(payNos.cbegin(), payNos.cend(),
                                   [&line](const QString &p) { return line.contains(p); }))
                    lines << line;
            }
            return lines.join(u'\n');
        };
        // The refusals' log lines, read from agent-3's output pipe as they come: one for
        // each lock it held before the freeze.
        static const QRegularExpression refused(
            QStringLiteral("stale fencing token refused for \\S+ pay_no \"?([^\"\\s]+)"));
        const auto refusedPayNos = [&frozen] {
            QStringList payNos;
            const QString output = frozen.output();
            for (auto it = refused.globalMatch(output); it.hasNext();)
                payNos << it.next().captured(1);
            return payNos;
        };
        const auto refusedAll = [&refusedPayNos, &heldFirst] {
            const QStringList payNos = refusedPayNos();
            return QSet<QString>(payNos.cbegin(), payNos.cend()).contains(heldFirst);
        };
        QTRY_VERIFY2_WITH_TIMEOUT(refusedAll(), qPrintable(heldPaymentsLog()), 30000);
        QVERIFY2(m_cluster->metric(2, QStringLiteral("payonce_stale_fence_refused_total")) >= kHeld,
                 qPrintable(heldPaymentsLog()));
        // Every write refused as stale came from a holder that wrote after the pause, with a
        // token older than the one its order was paid under. (A holder that took its lock
        // after the order was paid — a copy in the storm, a worker finishing a row already
        // done — has the newer token: the state machine, not the fence, answers it.)
        const QString output = frozen.output();
        static const QRegularExpression lateWrite(QStringLiteral(
            "lock of (\\S+) (lost|held past the pause|passing after the pause), writing with fencing token (\\d+)"));
        QHash<QString, qint64> writeTokens; // per pay_no the oldest token written after the pause
        int lateHolders = 0;
        for (auto it = lateWrite.globalMatch(output); it.hasNext();) {
            const auto match = it.next();
            const qint64 token = match.captured(3).toLongLong();
            if (!writeTokens.contains(match.captured(1)) || token < writeTokens.value(match.captured(1)))
                writeTokens.insert(match.captured(1), token);
            lateHolders += match.captured(2) != u"passing after the pause";
        }
        const QStringList refusals = refusedPayNos();
        for (const QString &payNo : refusals) {
            QVERIFY2(writeTokens.contains(payNo),
                     qPrintable(payNo + QStringLiteral(" refused, not a holder writing after the pause\n")
                                + heldPaymentsLog()));
            const qint64 paidUnder = countRows(m_cluster->database(),
                                               QStringLiteral("SELECT o.fence FROM orders o JOIN pay_callback_log l "
                                                              "ON l.order_no = o.order_no WHERE l.pay_no = ?"),
                                               {payNo});
            QVERIFY2(paidUnder > writeTokens.value(payNo), qPrintable(QStringLiteral("%1 paid under %2, late token %3")
                                                                          .arg(payNo)
                                                                          .arg(paidUnder)
                                                                          .arg(writeTokens.value(payNo))));
        }
        qInfo("%d late holder(s) after the thaw (%d held before any other agent had a copy), %lld refused by the "
              "fence; payonce_stale_fence_refused_total on agent-3: %g",
              lateHolders, kHeld, qint64(refusals.size()),
              m_cluster->metric(2, QStringLiteral("payonce_stale_fence_refused_total")));
        const PaidOnceReport report = settledReport(prefix, kOrders);
        QVERIFY2(report.holds(), qPrintable(report.describe()));

        // Thawed, agent-3 serves again: payments only it is told of are paid by it (none of
        // its locks may stay held now that the pause is over).
        const QString thawedPrefix = QStringLiteral("THAWED-");
        constexpr int kThawedOrders = 4;
        const auto thawedNotifications = paidOrders(thawedPrefix, kThawedOrders);
        QCOMPARE(thawedNotifications.size(), kThawedOrders);
        CallbackStorm toThawed(thawedNotifications, {frozen.port()}, {});
        const CallbackStorm::Report thawedDelivered = toThawed.runProcessingEvents();
        qInfo("after the thaw, to agent-3 alone: %s", qPrintable(thawedDelivered.describe()));
        QVERIFY2(thawedDelivered.acknowledged == kThawedOrders, qPrintable(thawedDelivered.describe()));
        const PaidOnceReport thawedReport = settledReport(thawedPrefix, kThawedOrders);
        QVERIFY2(thawedReport.holds(), qPrintable(thawedReport.describe()));
        QVERIFY2(m_cluster->startAgent(2, {}, &error), qPrintable(error));
    }

    // kill -9 of one agent at 30% of the storm, started again at 60%: the others take its
    // copies, the platform's retries reach it again, and the workers finish the rows it
    // left `accepted`.
    void agentKilledMidStorm()
    {
        const QString prefix = QStringLiteral("KILL-");
        const auto notifications = paidOrders(prefix, kChaosOrders);
        QCOMPARE(notifications.size(), kChaosOrders);
        CallbackStorm storm(notifications, m_cluster->agentPorts(), {});
        storm.start();
        QVERIFY(waitForProgress(storm, 0.3));
        m_cluster->killAgent(1);
        qInfo("agent-2 killed after %lld POSTs; %lld rows accepted and not processed at that moment",
              storm.postsAnswered(),
              count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no LIKE ? AND status = 'accepted'", prefix));
        QVERIFY(waitForProgress(storm, 0.6));
        restartedTheStormEndsPaidOnce(storm, 1, prefix);
    }

    // The platform's view against the database's: every copy of a storm sent to one agent,
    // which is killed (-9) at 30%. Each notification the platform saw acknowledged (a copy
    // answered 200 SUCCESS) before the kill must have its durable row in the callback log
    // at that moment — the platform will never send it again — however the agent batches
    // its writes; and every copy answered SUCCESS (duplicates included, answered once their
    // group-committed row is in) has its own delivery row. Started again, the agent takes
    // the rest and every order is paid once.
    void aKilledAgentLosesNoDeliveryItAcknowledged()
    {
        const QString prefix = QStringLiteral("ACKED-");
        const auto notifications = paidOrders(prefix, kChaosOrders);
        QCOMPARE(notifications.size(), kChaosOrders);
        QStringList payNos;
        for (const CapturedRequest &notification : notifications)
            payNos << m_cluster->payNoOf(notification);
        QVERIFY2(!payNos.contains(QString()), "a notification's transaction id could not be read");
        CallbackStorm storm(notifications, {m_cluster->agentPorts().first()}, {});
        storm.start();
        QVERIFY(waitForProgress(storm, 0.3));
        m_cluster->killAgent(0);
        const QList<int> acknowledged = storm.acknowledgedSoFar();
        const QHash<int, qint64> successes = storm.successesSoFar();
        QStringList lost;
        for (int index : acknowledged) {
            if (countRows(m_cluster->database(),
                          QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"), {payNos.at(index)})
                != 1)
                lost << payNos.at(index);
        }
        // Every copy answered SUCCESS is a delivery the agent said it had — a duplicate's
        // answered once its group-committed row was in: each has a row of its own.
        qint64 successAnswers = 0;
        QStringList rowsMissing;
        for (auto it = successes.cbegin(); it != successes.cend(); ++it) {
            successAnswers += it.value();
            const qint64 rows = countRows(m_cluster->database(),
                                          QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ?"),
                                          {payNos.at(it.key())});
            if (rows < it.value())
                rowsMissing
                    << QStringLiteral("%1 (%2 SUCCESS, %3 rows)").arg(payNos.at(it.key())).arg(it.value()).arg(rows);
        }
        qInfo("agent-1 killed after %lld POSTs: %lld notifications acknowledged, %lld of them without a durable row; "
              "%lld SUCCESS answers, %lld notifications with fewer delivery rows than SUCCESS answers",
              storm.postsAnswered(), qint64(acknowledged.size()), qint64(lost.size()), successAnswers,
              qint64(rowsMissing.size()));
        QVERIFY2(acknowledged.size() > 0, "nothing was acknowledged before the kill");
        QVERIFY2(successAnswers > acknowledged.size(), "no duplicate copy was answered before the kill");
        QVERIFY2(lost.isEmpty(),
                 qPrintable(QStringLiteral("acknowledged, then lost with the agent: ") + lost.join(u' ')));
        QVERIFY2(rowsMissing.isEmpty(),
                 qPrintable(QStringLiteral("answered SUCCESS, then lost with the agent: ") + rowsMissing.join(u' ')));

        restartedTheStormEndsPaidOnce(storm, 0, prefix);
    }

    // Redis SIGKILLed at 30% of the storm and started again, empty, at 60%: the locks,
    // seen-sets and fence counters are gone; the database layers hold meanwhile; a fresh
    // storm after the agents see the new Redis is fenced with a new, larger epoch.
    void redisRestartedEmptyMidStorm()
    {
        const QString prefix = QStringLiteral("REDIS-");
        const QString after = QStringLiteral("REDISB-");
        const qint64 epochBefore = count("SELECT MAX(epoch) FROM fence_epochs");
        const auto notifications = paidOrders(prefix, kChaosOrders);
        QCOMPARE(notifications.size(), kChaosOrders);
        CallbackStorm storm(notifications, m_cluster->agentPorts(), {});
        storm.start();
        QVERIFY(waitForProgress(storm, 0.3));
        QVERIFY(m_cluster->redis().kill());
        const qint64 fenceBefore = count("SELECT MAX(fence) FROM orders WHERE order_no LIKE ?", prefix);
        qInfo("redis killed after %lld POSTs; highest fence so far %lld (epoch %lld)", storm.postsAnswered(),
              fenceBefore, epochOf(fenceBefore));
        QVERIFY(waitForProgress(storm, 0.6));
        QString error;
        QVERIFY2(m_cluster->redis().startAgain(&error), qPrintable(error));
        const CallbackStorm::Report delivered = storm.waitProcessingEvents();
        qInfo("storm: %s", qPrintable(delivered.describe()));
        QVERIFY2(delivered.acknowledged == kChaosOrders, qPrintable(delivered.describe()));
        PaidOnceReport report = settledReport(prefix, kChaosOrders);
        QVERIFY2(report.holds(), qPrintable(report.describe()));
        // Paid while Redis was dead: no lock, no token (effects written with fence 0; the
        // order keeps its confirm's token) — L4, L5 and the effect keys alone held.
        const qint64 unfenced = count("SELECT COUNT(*) FROM stock_log WHERE order_no LIKE ? AND fence = 0", prefix);
        qInfo("%lld orders paid with no lock and no fencing token while Redis was down", unfenced);
        QVERIFY2(unfenced > 0, "no order was paid while Redis was down: the kill was not mid-storm");

        // A fresh storm: each agent's next key-store call reconnects to the new Redis.
        const auto more = paidOrders(after, 20);
        QCOMPARE(more.size(), 20);
        CallbackStorm secondStorm(more, m_cluster->agentPorts(), {});
        const CallbackStorm::Report second = secondStorm.runProcessingEvents();
        QVERIFY2(second.acknowledged == 20, qPrintable(second.describe()));
        report = settledReport(after, 20);
        QVERIFY2(report.holds(), qPrintable(report.describe()));

        // The new Redis has a new run_id, so a new epoch; tokens kept growing per order.
        const qint64 epochAfter = count("SELECT MAX(epoch) FROM fence_epochs");
        QVERIFY2(epochAfter > epochBefore,
                 qPrintable(QStringLiteral("epoch %1 then %2").arg(epochBefore).arg(epochAfter)));
        const qint64 fencedAbove = count("SELECT COUNT(*) FROM orders WHERE order_no LIKE ? AND fence > ?", after,
                                         fenceBefore);
        QVERIFY2(fencedAbove == 20, qPrintable(QStringLiteral("%1 of 20 orders fenced above %2; the others: %3")
                                                   .arg(fencedAbove)
                                                   .arg(fenceBefore)
                                                   .arg(ordersFencedAtOrBelow(after, fenceBefore))));
        QCOMPARE(count("SELECT COUNT(*) FROM orders WHERE order_no LIKE ? AND fence >= ?", after, epochAfter << 32),
                 qint64(20));
        // Each fenced effect carries the token of the write that made it: its order's.
        for (const char *table : {"stock_log", "user_coupon", "point_log"}) {
            QCOMPARE(
                count(qPrintable(QStringLiteral("SELECT COUNT(*) FROM %1 e JOIN orders o ON o.order_no = e.order_no "
                                                "WHERE o.order_no LIKE ? AND e.fence <> 0 AND e.fence <> o.fence")
                                     .arg(QLatin1String(table))),
                      QStringLiteral("REDIS")),
                qint64(0));
        }
        qInfo("fence epochs %lld -> %lld; highest fence before the kill %lld, after the restart %lld", epochBefore,
              epochAfter, fenceBefore, count("SELECT MAX(fence) FROM orders WHERE order_no LIKE ?", after));
    }

    // The database stopped for 5 s at 30% of the storm: the copies meanwhile are answered
    // FAIL (nothing durable, rule 8), the platform tries again, every order ends PAID once.
    void databaseStoppedMidStorm()
    {
        const QString prefix = QStringLiteral("DBDOWN-");
        const auto notifications = paidOrders(prefix, kChaosOrders);
        QCOMPARE(notifications.size(), kChaosOrders);
        CallbackStorm storm(notifications, m_cluster->agentPorts(), {});
        storm.start();
        QVERIFY(waitForProgress(storm, 0.3));
        QVERIFY(m_cluster->databaseServer().stop());
        const qint64 stoppedAt = storm.postsAnswered();
        QTest::qWait(5000); // the outage itself
        QString error;
        QVERIFY2(m_cluster->databaseServer().startAgain(&error), qPrintable(error));
        qInfo("database down for 5 s from POST %lld to %lld", stoppedAt, storm.postsAnswered());
        const CallbackStorm::Report delivered = storm.waitProcessingEvents();
        qInfo("storm: %s", qPrintable(delivered.describe()));
        QVERIFY2(delivered.acknowledged == kChaosOrders, qPrintable(delivered.describe()));
        QVERIFY2(delivered.answersByStatus.value(500) + delivered.answersByStatus.value(503) > 0,
                 "no copy was answered FAIL while the database was down");
        QVERIFY2(delivered.rounds > 1, "nothing needed the platform's retry");
        const PaidOnceReport report = settledReport(prefix, kChaosOrders);
        QVERIFY2(report.holds(), qPrintable(report.describe()));
        QCOMPARE(m_cluster->stockLeft(prefix), qint64(10));

        // Every worker thread of every agent reopened its connection: more concurrent
        // reads than an agent has workers, each answered.
        for (int i = 0; i < kAgents; ++i) {
            std::atomic<int> answered{0};
            QString failures;
            std::mutex mutex;
            runConcurrently(24, [&](int) {
                const HttpAnswer answer = m_cluster->agent(i).call("GET", QStringLiteral("/api/v1/orders/DBDOWN-0000"),
                                                                   {}, kView);
                if (answer.status == 200) {
                    ++answered;
                } else {
                    std::lock_guard guard(mutex);
                    failures += QStringLiteral("%1 %2\n").arg(answer.status).arg(QString::fromUtf8(answer.body));
                }
            });
            QTest::qWait(200); // the agent's output pipe read meanwhile
            const QStringList warnings = m_cluster->agent(i).output().split(u'\n').filter(
                QRegularExpression(QStringLiteral(" (warning|critical|error) ")));
            QVERIFY2(answered == 24, qPrintable(QStringLiteral("agent-%1: %2 warnings:\n%3")
                                                    .arg(i + 1)
                                                    .arg(failures, warnings.mid(warnings.size() - 12).join(u'\n'))));
        }
    }

    // QA scenarios started at agent-1 with all three agents as targets: a burst of
    // 100 orders × 5 copies, then a small mixed run. The agent's invariant report (its SQL)
    // must pass and agree with this test's own (PaidOnceReport), and the work must really
    // have spread over the three agents. The runner drives the platform itself, so for
    // this the platform notifies the agents, not the relay (AgentCluster::Notifications).
    void qaScenariosAcrossThreeAgents()
    {
        QString error;
        QVERIFY2(m_cluster->setNotifications(AgentCluster::Notifications::ToAgents, &error), qPrintable(error));
        QJsonArray targets;
        for (int i = 0; i < kAgents; ++i)
            targets.append(m_cluster->agentUrl(i));
        const QList<double> confirmsBefore = perAgentMetric(kConfirmsAnswered);

        constexpr int kBurstOrders = 100;
        const QJsonObject burst = runScenario(
            QJsonObject{{QStringLiteral("kind"), QStringLiteral("concurrent_burst")},
                        {QStringLiteral("orders"), kBurstOrders},
                        {QStringLiteral("duplicates"), 5},
                        {QStringLiteral("concurrency"), 8},
                        {QStringLiteral("targets"), targets},
                        {QStringLiteral("reason"), QStringLiteral("burst across 3 agents")}});
        QCOMPARE(burst.value(QStringLiteral("status")).toString(), QStringLiteral("passed"));
        const QString burstPrefix = burst.value(QStringLiteral("scenario_id")).toString() + u'-';
        const PaidOnceReport burstCheck = crossCheck(burst, kBurstOrders);
        if (QTest::currentTestFailed())
            return;
        // 5 copies over 3 targets: the platform sent ceil(5 / 3) = 2 copies of each
        // notification to every agent at one instant, so each recorded at least 2 per order,
        // and each was the first to process some of them.
        QVERIFY2(burstCheck.deliveries >= kBurstOrders * 6, qPrintable(burstCheck.describe()));
        const QList<qint64> burstDeliveries = deliveriesPerAgent(burstPrefix, false);
        const QList<qint64> burstFirsts = deliveriesPerAgent(burstPrefix, true);
        for (int i = 0; i < kAgents; ++i) {
            QVERIFY2(burstDeliveries.at(i) >= kBurstOrders * 2,
                     qPrintable(QStringLiteral("agent-%1: %2 deliveries").arg(i + 1).arg(burstDeliveries.at(i))));
            QVERIFY2(burstFirsts.at(i) > 0, qPrintable(QStringLiteral("agent-%1 processed none first").arg(i + 1)));
        }

        constexpr int kMixedOrders = 24;
        const QJsonObject mixed = runScenario(QJsonObject{{QStringLiteral("kind"), QStringLiteral("mixed")},
                                                          {QStringLiteral("orders"), kMixedOrders},
                                                          {QStringLiteral("duplicates"), 3},
                                                          {QStringLiteral("concurrency"), 6},
                                                          {QStringLiteral("targets"), targets}});
        QCOMPARE(mixed.value(QStringLiteral("status")).toString(), QStringLiteral("passed"));
        crossCheck(mixed, kMixedOrders);
        if (QTest::currentTestFailed())
            return;
        const QJsonObject progress = mixed.value(QStringLiteral("progress")).toObject();
        QCOMPARE(progress.value(QStringLiteral("outbox_redelivered")).toInteger(), kMixedOrders / 4);
        QCOMPARE(progress.value(QStringLiteral("redeliveries")).toInteger(), (kMixedOrders / 4) * 3);
        // The storm's, the queue's and the gateway replay's notifications went to the trade's
        // notify_url — the agent that confirmed it, each in turn.
        const QString mixedPrefix = mixed.value(QStringLiteral("scenario_id")).toString() + u'-';
        const QList<qint64> mixedDeliveries = deliveriesPerAgent(mixedPrefix + u'r', false);
        for (int i = 0; i < kAgents; ++i)
            QVERIFY2(mixedDeliveries.at(i) > 0, qPrintable(QStringLiteral("agent-%1: no storm delivery").arg(i + 1)));

        // The runner's confirms (users clicking) reached every agent too.
        const QList<double> confirmsAfter = perAgentMetric(kConfirmsAnswered);
        for (int i = 0; i < kAgents; ++i) {
            qInfo("agent-%d: burst %lld deliveries (%lld processed first), storm %lld deliveries, %g confirms answered "
                  "2xx",
                  i + 1, burstDeliveries.at(i), burstFirsts.at(i), mixedDeliveries.at(i),
                  confirmsAfter.at(i) - confirmsBefore.at(i));
            QVERIFY(confirmsAfter.at(i) - confirmsBefore.at(i) >= (kBurstOrders + kMixedOrders) / kAgents);
        }
        QVERIFY2(m_cluster->setNotifications(AgentCluster::Notifications::ToRelay, &error), qPrintable(error));
    }

private:
    /// POSTs a QA scenario to agent-1 (operator) and polls it until it is no longer
    /// running: the run as GET /api/v1/qa/scenarios/{id} answers it, with scenario_id.
    QJsonObject runScenario(const QJsonObject &params)
    {
        const HttpAnswer started = m_cluster->agent(0).call("POST", QStringLiteral("/api/v1/qa/scenarios"),
                                                            QJsonDocument(params).toJson(QJsonDocument::Compact),
                                                            kDesk);
        if (started.status != 202) {
            qWarning("POST scenario: %d %s", started.status, started.body.constData());
            return {};
        }
        const QString id = started.json().value(QStringLiteral("scenario_id")).toString();
        QElapsedTimer waited;
        waited.start();
        QJsonObject run;
        while (waited.elapsed() < 300000) {
            run = m_cluster->agent(0).call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kDesk).json();
            if (run.value(QStringLiteral("status")).toString() != u"running")
                break;
            QTest::qWait(250); // the agents' output pipes read meanwhile
        }
        qInfo("%s %s in %lld ms: %s", qPrintable(params.value(QStringLiteral("kind")).toString()), qPrintable(id),
              waited.elapsed(),
              QJsonDocument(run.value(QStringLiteral("report")).toObject()).toJson(QJsonDocument::Compact).constData());
        if (run.value(QStringLiteral("status")).toString() != u"passed")
            qWarning("%s\n%s", QJsonDocument(run).toJson().constData(),
                     qPrintable(m_cluster->agent(0).output().right(3000)));
        run.insert(QStringLiteral("scenario_id"), id);
        return run;
    }

    /// The agent's report of a finished run against this test's own SQL check: both pass,
    /// and they count the same orders, deliveries and deciding layers.
    PaidOnceReport crossCheck(const QJsonObject &run, qint64 orders)
    {
        const QJsonObject report = run.value(QStringLiteral("report")).toObject();
        const PaidOnceReport check = checkPaidOnce(m_cluster->database(),
                                                   run.value(QStringLiteral("scenario_id")).toString() + u'-', orders);
        qInfo("the test's check: %s", qPrintable(check.describe()));
        [&] {
            QVERIFY(report.value(QStringLiteral("passed")).toBool());
            QVERIFY2(check.holds(), qPrintable(check.describe()));
            QCOMPARE(report.value(QStringLiteral("orders")).toInteger(), orders);
            QCOMPARE(report.value(QStringLiteral("paid_once")).toInteger(), check.paid);
            QCOMPARE(report.value(QStringLiteral("lost")).toInteger(), qint64(0));
            QCOMPARE(report.value(QStringLiteral("double_effects")).toInteger(), qint64(0));
            QCOMPARE(report.value(QStringLiteral("missing_effects")).toInteger(), qint64(0));
            QCOMPARE(report.value(QStringLiteral("deliveries")).toInteger(), check.deliveries);
            QMap<QString, qint64> byLayer;
            const QJsonObject layers = report.value(QStringLiteral("by_layer")).toObject();
            for (auto it = layers.begin(); it != layers.end(); ++it)
                byLayer.insert(it.key(), it.value().toInteger());
            QCOMPARE(byLayer, check.deliveriesByLayer);
        }();
        return check;
    }

    /// callback_deliveries of the orders starting with `prefix`, per agent (agent_id);
    /// only those it processed first when `firstOnly`.
    QList<qint64> deliveriesPerAgent(const QString &prefix, bool firstOnly)
    {
        QList<qint64> counts;
        for (int i = 1; i <= kAgents; ++i) {
            counts << countRows(m_cluster->database(),
                                QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE order_no LIKE ? "
                                               "AND agent_id = ?")
                                    + (firstOnly ? QStringLiteral(" AND error_code = 'processed'") : QString()),
                                {QVariant(prefix + u'%'), QStringLiteral("agent-%1").arg(i)});
        }
        return counts;
    }

    QList<double> perAgentMetric(const QString &name)
    {
        QList<double> values;
        for (int i = 0; i < kAgents; ++i)
            values << qMax(0.0, m_cluster->metric(i, name));
        return values;
    }

    QList<CapturedRequest> paidOrders(const QString &prefix, int n)
    {
        QString error;
        const auto notifications = m_cluster->paidOrders(prefix, n, &error);
        if (notifications.isEmpty())
            qWarning("%s", qPrintable(error));
        return notifications;
    }

    qint64 count(const char *sql, const QVariant &a = {}, const QVariant &b = {})
    {
        QVariantList binds;
        // A string bind names a run: the order_no prefix of a LIKE.
        for (const QVariant &bind : {a, b}) {
            if (bind.isValid())
                binds << (bind.typeId() == QMetaType::QString ? QVariant(bind.toString() + u'%') : bind);
        }
        return countRows(m_cluster->database(), QString::fromLatin1(sql), binds);
    }

    /// The orders of `prefix` whose fence is not above `fence`, each with its fence, its
    /// stock entry's fence (0: paid with no lock) and its deliveries (layer@agent): what a
    /// failure needs to tell a token that went backwards from a payment made while an agent
    /// could not reach Redis.
    QString ordersFencedAtOrBelow(const QString &prefix, qint64 fence)
    {
        const bool postgres = m_cluster->database().dialect() == sql::Dialect::PostgreSql;
        const QString row =
            postgres ? QStringLiteral(
                "o.order_no || ' fence ' || o.fence || ' stock_log fence ' || COALESCE((SELECT MAX(s.fence) "
                "FROM stock_log s WHERE s.order_no = o.order_no), -1) || ' deliveries ' || COALESCE((SELECT "
                "string_agg(d.layer || '@' || COALESCE(d.agent_id, '?'), ',') FROM callback_deliveries d "
                "WHERE d.order_no = o.order_no), '')")
                     : QStringLiteral(
                         "CONCAT(o.order_no, ' fence ', o.fence, ' stock_log fence ', COALESCE((SELECT MAX(s.fence) "
                         "FROM stock_log s WHERE s.order_no = o.order_no), -1), ' deliveries ', COALESCE((SELECT "
                         "GROUP_CONCAT(CONCAT(d.layer, '@', COALESCE(d.agent_id, '?')) SEPARATOR ',') FROM "
                         "callback_deliveries d WHERE d.order_no = o.order_no), ''))");
        const QString all = postgres ? QStringLiteral("string_agg(%1, '; ')").arg(row)
                                     : QStringLiteral("GROUP_CONCAT(%1 SEPARATOR '; ')").arg(row);
        return firstValueText(
            m_cluster->database(),
            QStringLiteral("SELECT %1 FROM orders o WHERE o.order_no LIKE ? AND o.fence <= ?").arg(all),
            QVariantList{QVariant(prefix + u'%'), QVariant(fence)});
    }

    /// Polls `done` (the event loop running in between) until it holds or the time is up.
    static bool pollUntil(const std::function<bool()> &done, int timeoutMs, int stepMs)
    {
        QElapsedTimer waited;
        waited.start();
        while (!done()) {
            if (waited.elapsed() > timeoutMs)
                return false;
            QTest::qWait(stepMs);
        }
        return true;
    }

    /// Agent `killed` started again: the storm of kChaosOrders (`prefix`) ends with every
    /// notification acknowledged, some copy having met the dead agent, and every order paid
    /// once with one of each effect.
    void restartedTheStormEndsPaidOnce(CallbackStorm &storm, int killed, const QString &prefix)
    {
        QString error;
        QVERIFY2(m_cluster->startAgent(killed, {}, &error), qPrintable(error));
        const CallbackStorm::Report delivered = storm.waitProcessingEvents();
        qInfo("storm: %s", qPrintable(delivered.describe()));
        QVERIFY2(delivered.acknowledged == kChaosOrders, qPrintable(delivered.describe()));
        QVERIFY2(delivered.answersByStatus.value(0) > 0, "no copy met the dead agent: the kill was not mid-storm");
        const PaidOnceReport report = settledReport(prefix, kChaosOrders);
        QVERIFY2(report.holds(), qPrintable(report.describe()));
        QCOMPARE(m_cluster->stockLeft(prefix), qint64(10));
    }

    bool waitForProgress(const CallbackStorm &storm, double share)
    {
        const qint64 posts = qint64(double(storm.firstRoundPosts()) * share);
        if (pollUntil([&] { return storm.postsAnswered() >= posts; }, 180000, 10))
            return true;
        qWarning("the storm stalled at %lld POSTs", storm.postsAnswered());
        return false;
    }

    bool waitSettled(const QString &prefix, qint64 orders)
    {
        return pollUntil([&] { return checkPaidOnce(m_cluster->database(), prefix, orders).settled(); }, kSettleMs,
                         200);
    }

    /// Waits until nothing is in motion for the run, then reads and prints its report.
    PaidOnceReport settledReport(const QString &prefix, qint64 orders)
    {
        QElapsedTimer waited;
        waited.start();
        const bool settled = waitSettled(prefix, orders);
        const PaidOnceReport report = checkPaidOnce(m_cluster->database(), prefix, orders);
        qInfo("%s%s (settled %lld ms after the storm)", settled ? "" : "NOT SETTLED: ", qPrintable(report.describe()),
              waited.elapsed());
        return report;
    }

    void printPerAgent(const QString &prefix)
    {
        for (int i = 1; i <= kAgents; ++i) {
            const QString agent = QStringLiteral("agent-%1").arg(i);
            qInfo("%s: %lld deliveries, %lld processed first", qPrintable(agent),
                  countRows(
                      m_cluster->database(),
                      QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE order_no LIKE ? AND agent_id = ?"),
                      {QVariant(prefix + u'%'), agent}),
                  countRows(
                      m_cluster->database(),
                      QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE order_no LIKE ? AND agent_id = ? "
                                     "AND error_code = 'processed'"),
                      {QVariant(prefix + u'%'), agent}));
        }
    }

    std::unique_ptr<AgentCluster> m_cluster;
};

QTEST_GUILESS_MAIN(TestMultiAgent)
#include "tst_multiagent.moc"
