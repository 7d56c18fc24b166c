// A QA run's lease, on each dialect, with real agent processes. An agent is killed (-9) in
// the middle of a retry storm it runs, after it has renewed its lease for several lease
// periods; another agent started on the same database afterwards shows the run abandoned —
// naming the dead agent and the moment its lease ended — within the lease of the kill, and
// writes it down. An agent frozen (SIGSTOP) past its lease loses the run: thawed, it stops
// it and writes no end of its own over the abandonment.

#include "agentconfig.h"
#include "agentfixture.h"
#include "storagefixture.h"

#include "sql/sqlqarunstore.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QTest>

#include <csignal>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr int kLeaseMs = 5000;
// A storm on WeChat's schedule x 0.01: 0.15 + 0.15 + 0.3 + 1.8 + 6 + 12 s, far longer than
// the moment of the kill.
const QByteArray kLongStorm = R"({"kind":"retry_storm","orders":4,"duplicates":6,"concurrency":2,)"
                              R"("time_scale":0.01,"reason":"lease test"})";

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

qint64 isoToMs(const QJsonValue &value)
{
    return QDateTime::fromString(value.toString(), Qt::ISODateWithMs).toMSecsSinceEpoch();
}

} // namespace

class TestQaLease : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_fixture.startDatabase(), m_fixture.error()); }

    void killedAgentsRunIsAbandonedWithinTheLease()
    {
        auto dying = startAgent(QStringLiteral("qa-lease-a"));
        QVERIFY(dying);
        const QString id = startStorm(*dying);
        QVERIFY(!id.isEmpty());
        // Running, its lease renewed, for more than two lease periods.
        const qint64 firstLease = leaseUntil(id);
        QElapsedTimer running;
        running.start();
        while (running.elapsed() < 2 * kLeaseMs + 2000) {
            const QJsonObject run = dying->call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kView).json();
            QCOMPARE(run.value(u"status").toString(), QStringLiteral("running"));
            QCOMPARE(run.value(u"agent_id").toString(), QStringLiteral("qa-lease-a"));
            QTest::qWait(250);
        }
        QVERIFY2(leaseUntil(id) > firstLease + kLeaseMs, "the lease was not renewed while the run lasted");

        const qint64 killedAt = nowMs();
        dying->killHard();
        dying.reset();
        qInfo("agent qa-lease-a killed %lld ms into run %s", qint64(running.elapsed()), qPrintable(id));
        QCOMPARE(status(id), QStringLiteral("running")); // nobody has written anything down yet

        auto other = startAgent(QStringLiteral("qa-lease-b"));
        QVERIFY(other);
        QJsonObject run;
        qint64 seenAt = 0;
        while (nowMs() - killedAt < 3 * kLeaseMs) {
            run = other->call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kView).json();
            if (run.value(u"status").toString() == u"abandoned") {
                seenAt = nowMs();
                break;
            }
            QTest::qWait(100);
        }
        QVERIFY2(seenAt > 0, QJsonDocument(run).toJson().constData());
        qInfo("shown abandoned by qa-lease-b %lld ms after the kill (lease %d ms)", seenAt - killedAt, kLeaseMs);
        // Within the lease of the kill (the last renewal came before it), give or take one poll.
        QVERIFY2(seenAt - killedAt <= kLeaseMs + 200, qPrintable(QString::number(seenAt - killedAt)));
        QCOMPARE(run.value(u"agent_id").toString(), QStringLiteral("qa-lease-a"));
        const qint64 endedAt = isoToMs(run.value(u"finished_at"));
        QCOMPARE(endedAt, isoToMs(run.value(u"lease_until")));
        QVERIFY2(endedAt > killedAt - kLeaseMs && endedAt <= killedAt + kLeaseMs,
                 qPrintable(run.value(u"finished_at").toString()));
        // The list says the same; the run's disable_layers no longer apply.
        const QJsonArray listed =
            QJsonDocument::fromJson(other->call("GET", QStringLiteral("/api/v1/qa/scenarios"), {}, kView).body).array();
        QVERIFY(!listed.isEmpty());
        QCOMPARE(listed.first().toObject().value(u"scenario_id").toString(), id);
        QCOMPARE(listed.first().toObject().value(u"status").toString(), QStringLiteral("abandoned"));
        sql::SqlQaRunStore store(m_fixture.database());
        auto live = store.running();
        QVERIFY(live.ok());
        QVERIFY(live.value().isEmpty());
        // The other agent writes it down within a third of its lease.
        QTRY_COMPARE_WITH_TIMEOUT(status(id), QStringLiteral("abandoned"), kLeaseMs);
        QCOMPARE(countRows(
                     m_fixture.database(),
                     QStringLiteral("SELECT COUNT(*) FROM qa_runs WHERE scenario_id = ? AND finished_at = lease_until"),
                     {id}),
                 qint64(1));
        QTRY_VERIFY_WITH_TIMEOUT(other->output().contains(id + QStringLiteral(" abandoned: its agent qa-lease-a")),
                                 5000);
        // And it runs scenarios of its own meanwhile.
        const HttpAnswer next = other->call("POST", QStringLiteral("/api/v1/qa/scenarios"),
                                            R"({"kind":"concurrent_burst","orders":2,"duplicates":2})", kDesk);
        QCOMPARE(next.status, 202);
        QCOMPARE(waitForEnd(*other, next.json().value(u"scenario_id").toString()), QStringLiteral("passed"));
        QCOMPARE(other->stop(), 0);
    }

    void frozenAgentLosesItsRunAndLeavesItAbandoned()
    {
        auto frozen = startAgent(QStringLiteral("qa-lease-c"));
        QVERIFY(frozen);
        const QString id = startStorm(*frozen);
        QVERIFY(!id.isEmpty());
        QTest::qWait(1000);
        QCOMPARE(::kill(pid_t(frozen->pid()), SIGSTOP), 0);
        auto thaw = qScopeGuard([&frozen] { ::kill(pid_t(frozen->pid()), SIGCONT); });
        sql::SqlQaRunStore store(m_fixture.database());
        QTRY_VERIFY_WITH_TIMEOUT(abandonedInStore(store, id), 2 * kLeaseMs);
        QTest::qWait(1000);
        QCOMPARE(::kill(pid_t(frozen->pid()), SIGCONT), 0);
        // Thawed, its keeper finds the lease lost at its next beat: the run stops and
        // writes nothing of its own (not error, not passed) over the abandonment.
        QTRY_VERIFY_WITH_TIMEOUT(frozen->output().contains(id + QStringLiteral(" lost its lease")), 2 * kLeaseMs);
        QTRY_COMPARE_WITH_TIMEOUT(status(id), QStringLiteral("abandoned"), kLeaseMs);
        QTest::qWait(kLeaseMs / 2);
        QCOMPARE(status(id), QStringLiteral("abandoned"));
        QCOMPARE(frozen->call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kView)
                     .json()
                     .value(u"status")
                     .toString(),
                 QStringLiteral("abandoned"));
        // The agent is free for the next run.
        const HttpAnswer next = frozen->call("POST", QStringLiteral("/api/v1/qa/scenarios"),
                                             R"({"kind":"concurrent_burst","orders":2,"duplicates":2})", kDesk);
        QCOMPARE(next.status, 202);
        QCOMPARE(waitForEnd(*frozen, next.json().value(u"scenario_id").toString()), QStringLiteral("passed"));
        thaw.dismiss();
        QCOMPARE(frozen->stop(), 0);
    }

private:
    std::unique_ptr<AgentProcess> startAgent(const QString &instanceId)
    {
        AgentProcess::Options options;
        options.simNotifyTimeScale = kFastSimulator;
        options.extraConfig = QJsonObject{{QStringLiteral("instance_id"), instanceId},
                                          {QStringLiteral("qa"), QJsonObject{{QStringLiteral("enabled"), true},
                                                                             {QStringLiteral("lease_ms"), kLeaseMs}}},
                                          noPatrolTimer()};
        return m_fixture.startAnother(options);
    }

    /// A long storm, once it is past its set-up.
    QString startStorm(AgentProcess &agent)
    {
        const HttpAnswer started = agent.call("POST", QStringLiteral("/api/v1/qa/scenarios"), kLongStorm, kDesk);
        if (started.status != 202) {
            qWarning("POST scenario: %d %s", started.status, started.body.constData());
            return {};
        }
        const QString id = started.json().value(u"scenario_id").toString();
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < 30000) {
            const QJsonObject run = agent.call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kView).json();
            if (run.value(u"progress").toObject().value(u"phase").toString() == u"retry_storm")
                return id;
            if (run.value(u"status").toString() != u"running") {
                qWarning("%s", QJsonDocument(run).toJson().constData());
                return {};
            }
            QTest::qWait(100);
        }
        return {};
    }

    QString waitForEnd(AgentProcess &agent, const QString &id)
    {
        QElapsedTimer waited;
        waited.start();
        QJsonObject run;
        while (waited.elapsed() < 120000) {
            run = agent.call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kView).json();
            if (run.value(u"status").toString() != u"running")
                break;
            QTest::qWait(200);
        }
        if (run.value(u"status").toString() != u"passed")
            qWarning("%s", QJsonDocument(run).toJson().constData());
        return run.value(u"status").toString();
    }

    static bool abandonedInStore(sql::SqlQaRunStore &store, const QString &id)
    {
        auto run = store.find(id);
        return run.ok() && run.value() && run.value()->status == u"abandoned";
    }

    QString status(const QString &id)
    {
        return firstValueText(m_fixture.database(), QStringLiteral("SELECT status FROM qa_runs WHERE scenario_id = ?"),
                              {id});
    }

    qint64 leaseUntil(const QString &id)
    {
        return firstValueText(m_fixture.database(),
                              QStringLiteral("SELECT lease_until FROM qa_runs WHERE scenario_id = ?"), {id})
            .toLongLong();
    }

    AgentFixture m_fixture; ///< the database; each test starts its own agents on it
};

QTEST_GUILESS_MAIN(TestQaLease)
#include "tst_qalease.moc"
