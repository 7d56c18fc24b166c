// The console follows the agent without anyone pressing Refresh: against a real
// payonce-agent (SQLite, payonce-sim, a stream interval of one second, its order.paid
// webhook pointed at a port nobody listens on, one attempt), a finding raised by a
// reconciliation run and the compensation the patrol proposes for it appear in an open
// console's compensations view within one stream interval of the run's answer; an
// order.paid event that goes dead reaches the outbox view through the stream's
// outbox.dead_letter event; a money finding puts a notice in the status bar until the
// compensations view is opened; a QA run whose agent is killed while the console follows
// it ends abandoned in the open QA view once another agent takes the address over. The
// views have no polling timer to thank for any of it.

#include "agentconfig.h"
#include "agentfixture.h"
#include "consoletestsupport.h"
#include "storagefixture.h"

#include "console/app/mainwindow.h"
#include "console/models/compensationsmodel.h"
#include "console/models/findingsmodel.h"
#include "console/models/outboxmodel.h"
#include "console/models/qarunsmodel.h"
#include "console/views/compensationsview.h"
#include "console/views/outboxview.h"
#include "console/views/qaview.h"

#include <QAction>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QLabel>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>
#include <QTimer>

#include <csignal>

using namespace payonce;
using namespace payonce::console;
using namespace payonce::testsupport;

namespace {

constexpr int kAgentTimeoutMs = 30000;
constexpr int kStreamIntervalMs = 1000;
constexpr int kQaLeaseMs = 3000;
// A storm on WeChat's schedule x 0.01 (0.15 + 0.15 + 0.3 + 1.8 + 6 + 12 s): still running
// when its agent is killed.
const QByteArray kLongStorm = R"({"kind":"retry_storm","orders":4,"duplicates":6,"concurrency":2,)"
                              R"("time_scale":0.01,"reason":"live QA view"})";

int rowWhere(const JsonTableModel *model, const QString &key, const QString &value)
{
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->rowObject(row).value(key).toString() == value)
            return row;
    }
    return -1;
}

} // namespace

class TestConsoleLive : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            streamEvery(kStreamIntervalMs),
            // Findings and proposals come from this test's reconciliation runs only.
            noPatrolTimer(),
            noOrderCloser(),
            // Port 1: every order.paid delivery fails, and one failure makes it dead.
            {QStringLiteral("outbox"),
             QJsonObject{{QStringLiteral("webhook_urls"), QJsonArray{QStringLiteral("http://127.0.0.1:1/hooks/paid")}},
                         {QStringLiteral("max_attempts"), 1}}},
        };
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(Dialect::Sqlite, options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void findingAndProposalAppearWithinOneStreamInterval()
    {
        auto window = openTestedConsole(m_agent->port(), kViewToken);
        child<QAction>(window.get(), "showView4")->trigger();
        QCOMPARE(window->views()->currentWidget(), window->compensations());
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        const QString orderNo = QStringLiteral("ORD-LIVE-FIND");
        payAndWaitForPoints(orderNo);
        FindingsModel *findings = window->compensations()->findings();
        CompensationsModel *queue = window->compensations()->compensations();
        QTest::qWait(kStreamIntervalMs); // the view's first lists are in: what follows is the stream's doing
        QCOMPARE(rowWhere(findings, QStringLiteral("order_no"), orderNo), -1);

        QString error;
        QVERIFY2(raiseEffectMismatch(*m_agent, m_agent.database(), orderNo, &error), qPrintable(error));
        QElapsedTimer sinceTheRun;
        sinceTheRun.start();

        QTRY_VERIFY_WITH_TIMEOUT(rowWhere(findings, QStringLiteral("order_no"), orderNo) >= 0
                                     && rowWhere(queue, QStringLiteral("order_no"), orderNo) >= 0,
                                 kStreamIntervalMs);
        qInfo("finding and proposal shown %lld ms after the run's answer", qint64(sinceTheRun.elapsed()));
        const int proposal = rowWhere(queue, QStringLiteral("order_no"), orderNo);
        QCOMPARE(queue->rowObject(proposal).value(QStringLiteral("status")).toString(), QStringLiteral("proposed"));
        QCOMPARE(queue->rowObject(proposal).value(QStringLiteral("proposed_by")).toString(),
                 QStringLiteral("system:patrol"));
        // Not about money: a passing word in the status bar, no standing notice.
        QVERIFY2(window->statusBar()->currentMessage().contains(orderNo),
                 qPrintable(window->statusBar()->currentMessage()));
        QVERIFY(!child<QLabel>(window.get(), "findingNotice")->isVisible());
    }

    void deadLetterReachesTheOutboxView()
    {
        auto window = openTestedConsole(m_agent->port(), kViewToken);
        child<QAction>(window.get(), "showView9")->trigger();
        QCOMPARE(window->views()->currentWidget(), window->outbox());
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        QSignalSpy messages(window->stream(), &StreamClient::messageReceived);
        const QString orderNo = QStringLiteral("ORD-LIVE-DEAD");
        payAndWaitForPoints(orderNo);

        OutboxModel *events = window->outbox()->events();
        const auto deadRow = [&] {
            const int row = rowWhere(events, QStringLiteral("aggregate_id"), orderNo);
            return row >= 0 && events->rowObject(row).value(QStringLiteral("status")).toString() == u"dead" ? row : -1;
        };
        QTRY_VERIFY_WITH_TIMEOUT(deadRow() >= 0, kAgentTimeoutMs);
        // The agent announced it as it happened.
        bool announced = false;
        for (const QList<QVariant> &arguments : std::as_const(messages)) {
            const auto message = arguments.value(0).value<StreamMessage>();
            const auto *event = std::get_if<StreamEvent>(&message.body);
            announced = announced
                        || (event && event->kind == streamevent::OutboxDeadLetter && event->value == u"order.paid"
                            && event->detail.value(QStringLiteral("aggregate_id")).toString() == orderNo);
        }
        QVERIFY(announced);
    }

    void moneyFindingStaysNoticedUntilLookedAt()
    {
        auto window = openTestedConsole(m_agent->port(), kViewToken);
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        QLabel *notice = child<QLabel>(window.get(), "findingNotice");
        QVERIFY(!notice->isVisible());
        // As the stream delivers it (the agent raises double_payment for a second paid
        // trade of one order, which no simulator set-up here makes).
        StreamEvent raised{streamevent::FindingRaised,
                           QStringLiteral("order:ORD-LIVE-TWICE"),
                           QStringLiteral("double_payment"),
                           QStringLiteral("system:agent-1"),
                           QStringLiteral("double_payment found for ORD-LIVE-TWICE"),
                           QJsonObject{{QStringLiteral("order_no"), QStringLiteral("ORD-LIVE-TWICE")}}};
        Q_EMIT window->stream()->messageReceived(StreamMessage{1, QDateTime::currentDateTimeUtc(), raised});
        QVERIFY(notice->isVisible());
        QVERIFY2(notice->text().contains(u"ORD-LIVE-TWICE") && notice->text().contains(u"double_payment"),
                 qPrintable(notice->text()));
        child<QAction>(window.get(), "showView4")->trigger();
        QVERIFY(!notice->isVisible());
    }

    // A QA run whose agent is killed (-9) while an open console follows it: the console
    // loses its stream, reconnects by itself to the agent that takes the address over, and
    // shows the run abandoned, naming the dead agent, with nobody pressing anything. The QA
    // view has no timer of its own: the heir writes the run down once its lease has run out
    // and announces it, and a stream that (re)connects makes the view fetch what it missed.
    void aRunWhoseAgentDiedEndsAbandonedInTheOpenQaView()
    {
        auto dying = startQaAgent(QStringLiteral("qa-live-dying"), 0);
        QVERIFY(dying);
        auto window = openTestedConsole(dying->port(), kViewToken);
        child<QAction>(window.get(), "showView5")->trigger();
        QCOMPARE(window->views()->currentWidget(), window->qa());
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        const auto noClockOfItsOwn = [&] {
            for (const QTimer *timer : window->qa()->findChildren<QTimer *>())
                QVERIFY2(timer->isSingleShot() || !timer->isActive(),
                         qPrintable(QStringLiteral("a repeating timer in the QA view: ") + timer->objectName()));
        };
        noClockOfItsOwn();

        // Started elsewhere (a script, another console): listed and followed from its events.
        const HttpAnswer started = dying->call("POST", QStringLiteral("/api/v1/qa/scenarios"), kLongStorm, kDesk);
        QVERIFY2(started.status == 202, started.body.constData());
        const QString id = started.json().value(QStringLiteral("scenario_id")).toString();
        QaRunsModel *runs = window->qa()->runs();
        const auto statusShown = [&] {
            const int row = runs->rowOf(id);
            return row < 0 ? QString() : runs->rowObject(row).value(QStringLiteral("status")).toString();
        };
        QTRY_VERIFY_WITH_TIMEOUT(window->qa()->shownScenario() == id && statusShown() == u"running", kAgentTimeoutMs);
        QLabel *progress = child<QLabel>(window.get(), "scenarioProgress");
        QTRY_VERIFY_WITH_TIMEOUT(progress->text().contains(u"retry_storm:"), kAgentTimeoutMs);

        const int port = dying->port();
        QElapsedTimer sinceTheKill;
        sinceTheKill.start();
        QCOMPARE(::kill(pid_t(dying->pid()), SIGKILL), 0);
        dying.reset(); // reaps it
        QTRY_VERIFY_WITH_TIMEOUT(window->stream()->state() != StreamClient::State::Live, kAgentTimeoutMs);
        QCOMPARE(statusShown(), QStringLiteral("running")); // nobody has written anything down

        auto heir = startQaAgent(QStringLiteral("qa-live-heir"), port);
        QVERIFY(heir);
        QTRY_VERIFY_WITH_TIMEOUT(statusShown() == u"abandoned", kQaLeaseMs + kAgentTimeoutMs);
        qInfo("shown abandoned %lld ms after the kill (lease %d ms)", qint64(sinceTheKill.elapsed()), kQaLeaseMs);
        QCOMPARE(window->stream()->state(), StreamClient::State::Live);
        QCOMPARE(window->qa()->shownScenario(), id);
        QLabel *verdict = child<QLabel>(window.get(), "scenarioVerdict");
        QTRY_VERIFY_WITH_TIMEOUT(verdict->text().contains(u"qa-live-dying"), kAgentTimeoutMs);
        qInfo("shown: %s", qPrintable(verdict->text()));
        noClockOfItsOwn();
        QCOMPARE(heir->stop(), 0);
    }

private:
    /// An agent on this test's database with QA scenarios on (lease kQaLeaseMs) and the
    /// simulator's notifications fast (x 0.001); `port` 0: a free one.
    std::unique_ptr<AgentProcess> startQaAgent(const QString &instanceId, int port)
    {
        AgentProcess::Options options;
        options.port = port;
        options.simNotifyTimeScale = kFastSimulator;
        options.extraConfig = QJsonObject{
            {QStringLiteral("instance_id"), instanceId},
            streamEvery(kStreamIntervalMs),
            {QStringLiteral("qa"),
             QJsonObject{{QStringLiteral("enabled"), true}, {QStringLiteral("lease_ms"), kQaLeaseMs}}},
            noPatrolTimer(),
        };
        return m_agent.startAnother(options);
    }

    /// An order paid through the simulator, settled by the agent (its points granted).
    void payAndWaitForPoints(const QString &orderNo)
    {
        QString error;
        const QString payNo = m_agent->orderPaidAtSim(orderNo, 42, QStringLiteral("99.00"), QStringLiteral("SKU-LIVE"),
                                                      &error);
        QVERIFY2(!payNo.isEmpty(), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(countRows(m_agent.database(),
                                           QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"),
                                           {orderNo})
                                     > 0,
                                 kAgentTimeoutMs);
    }

    AgentFixture m_agent;
};

int main(int argc, char *argv[])
{
    return runConsoleTest<TestConsoleLive>(argc, argv, QStringLiteral("tst_consolelive"));
}

#include "tst_consolelive.moc"
