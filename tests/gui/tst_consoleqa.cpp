// payonce-console's QA view, audit trail and wall screen against a real payonce-agent with
// qa.enabled (SQLite, payonce-sim beside it; tokens view / desk (operator) / lead
// (approver)), driven through the widgets on the offscreen platform: a retry storm with the
// lock switched off, started from the form, ends with PASS and "0 double effects" shown
// while the unique index / state machine caught what the lock would have — in the report's
// hits by layer and in the dashboard's live totals. Every model and proxy of every window
// runs under QAbstractItemModelTester meanwhile.

#include "agentconfig.h"
#include "agentfixture.h"
#include "consoletestsupport.h"
#include "storagefixture.h"

#include "console/app/mainwindow.h"
#include "console/models/auditfilterproxy.h"
#include "console/models/auditmodel.h"
#include "console/models/layercolors.h"
#include "console/models/layertotalsmodel.h"
#include "console/models/qarunsmodel.h"
#include "console/models/scenarioreportmodel.h"
#include "console/views/auditview.h"
#include "console/views/dashboardview.h"
#include "console/views/qaview.h"
#include "console/views/ratechart.h"
#include "console/views/tablepanel.h"
#include "console/views/wallscreen.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QFile>
#include <QFontInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace payonce;
using namespace payonce::console;
using namespace payonce::testsupport;

namespace {

constexpr int kAgentTimeoutMs = 30000;
// A whole scenario: set-up, the storm on the platform's (scaled) schedule, the drain.
constexpr int kScenarioTimeoutMs = 240000;

/// The count a TablePanel's table shows for a layer (what the operator reads).
qint64 shownCount(QTableView *table, const QString &layer, int column)
{
    for (int row = 0; row < table->model()->rowCount(); ++row) {
        if (table->model()->index(row, 0).data().toString() == layer)
            return table->model()->index(row, column).data().toLongLong();
    }
    return -1;
}

} // namespace

class TestConsoleQa : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            qaEnabled(),
            streamEvery(100),
            noPatrolTimer(),
        };
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(Dialect::Sqlite, options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void lockDisabledStormFromTheUiPasses()
    {
        auto window = openConsole(kDeskToken);
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        LayerTotalsModel *totals = window->dashboard()->layerTotals();
        QTRY_VERIFY_WITH_TIMEOUT(child<QLabel>(window.get(), "requestsValue")->text() != u"–", kAgentTimeoutMs);
        const qint64 caughtBefore = totals->total(Layer::UniqueIndex) + totals->total(Layer::StateMachine);

        QApplication::setActiveWindow(window.get());
        QTest::keyClick(window.get(), Qt::Key_5, Qt::ControlModifier);
        QTRY_COMPARE(window->views()->currentWidget(), window->qa());
        // The target defaults to the connected agent.
        QCOMPARE(child<QLineEdit>(window.get(), "scenarioTargets")->text(), agentUrl());
        child<QComboBox>(window.get(), "scenarioKind")->setCurrentText(QStringLiteral("retry_storm"));
        child<QSpinBox>(window.get(), "scenarioOrders")->setValue(10);
        child<QSpinBox>(window.get(), "scenarioDuplicates")->setValue(3);
        child<QSpinBox>(window.get(), "scenarioConcurrency")->setValue(5);
        auto *start = child<QPushButton>(window.get(), "startScenario");
        QVERIFY(!start->isEnabled()); // no reason yet
        QTest::mouseClick(child<QCheckBox>(window.get(), "disableLayer_lock"), Qt::LeftButton);
        QTest::keyClicks(child<QLineEdit>(window.get(), "scenarioReason"),
                         QStringLiteral("QA-12 storm without the lock"));
        const QString plan = child<QLabel>(window.get(), "scenarioPlan")->text();
        QVERIFY2(plan.contains(u"retry_storm") && plan.contains(u"switched off for its orders: lock"),
                 qPrintable(plan));
        QVERIFY(start->isEnabled());
        QTest::mouseClick(start, Qt::LeftButton);

        QLabel *result = child<QLabel>(window.get(), "scenarioResult");
        QTRY_VERIFY_WITH_TIMEOUT(result->text().startsWith(u"Started"), kAgentTimeoutMs);
        const QString id = window->qa()->shownScenario();
        QVERIFY2(result->text().contains(id), qPrintable(result->text()));
        // Live progress from the stream's scenario.progress events.
        QLabel *progress = child<QLabel>(window.get(), "scenarioProgress");
        QTRY_VERIFY_WITH_TIMEOUT(progress->text().contains(u"retry_storm:"), kScenarioTimeoutMs);

        QLabel *verdict = child<QLabel>(window.get(), "scenarioVerdict");
        QTRY_VERIFY_WITH_TIMEOUT(!verdict->text().isEmpty(), kScenarioTimeoutMs);
        QVERIFY2(verdict->text().startsWith(u"PASS") && verdict->text().contains(u"0 double effects"),
                 qPrintable(verdict->text() + u'\n' + child<QLabel>(window.get(), "scenarioDetails")->text()));
        QCOMPARE(window->qa()->shownScenario(), id);
        qInfo("%s; by layer %s", qPrintable(verdict->text()),
              QJsonDocument(window->qa()->report()->report().value(QStringLiteral("by_layer")).toObject())
                  .toJson(QJsonDocument::Compact)
                  .constData());

        // What the lock would have caught, the unique index and the state machine did:
        // in the report as the table shows it, in the layer's colour …
        ScenarioReportModel *report = window->qa()->report();
        auto *reportTable = child<QTableView>(window.get(), "scenarioReportTable");
        const qint64 caught =
            shownCount(reportTable, QStringLiteral("unique_index"), ScenarioReportModel::DeliveriesColumn)
            + shownCount(reportTable, QStringLiteral("state_machine"), ScenarioReportModel::DeliveriesColumn);
        QVERIFY2(caught > 0, QJsonDocument(report->report()).toJson().constData());
        QCOMPARE(shownCount(reportTable, QStringLiteral("lock"), ScenarioReportModel::DeliveriesColumn), 0);
        QCOMPARE(report->index(report->rowOf(QStringLiteral("unique_index")), ScenarioReportModel::LayerColumn)
                     .data(Qt::DecorationRole)
                     .value<QColor>(),
                 layerColor(Layer::UniqueIndex));
        // … and in the dashboard's live totals.
        QTRY_VERIFY_WITH_TIMEOUT(totals->total(Layer::UniqueIndex) + totals->total(Layer::StateMachine)
                                     >= caughtBefore + caught,
                                 kAgentTimeoutMs);

        // The past runs list it, passed, with the lock off.
        QaRunsModel *runs = window->qa()->runs();
        QTRY_VERIFY_WITH_TIMEOUT(runs->rowOf(id) >= 0
                                     && runs->rowObject(runs->rowOf(id)).value(QStringLiteral("status")).toString()
                                            == u"passed",
                                 kAgentTimeoutMs);
        QCOMPARE(runs->index(runs->rowOf(id), runs->columnOf(QStringLiteral("disable_layers"))).data().toString(),
                 QStringLiteral("lock"));
        QCOMPARE(runs->rowObject(runs->rowOf(id)).value(QStringLiteral("started_by")).toString(),
                 QStringLiteral("desk"));
    }

    // The audit trail lists the scenario's start (desk) and a breaker flip (lead) with their
    // actors and reasons; the actor filter (the API's) and the target and end-of-range
    // filters (the proxy's) narrow it; the CSV holds what is shown.
    void auditListsTheActionsWithTheirActors()
    {
        QCOMPARE(flipBreaker("forced_open", QStringLiteral("audit drill INC-4")), 200);
        QCOMPARE(flipBreaker("auto", QStringLiteral("drill over")), 200);

        auto window = openConsole(kViewToken);
        QApplication::setActiveWindow(window.get());
        QTest::keyClick(window.get(), Qt::Key_6, Qt::ControlModifier);
        QTRY_COMPARE(window->views()->currentWidget(), window->audit());
        AuditModel *audit = window->audit()->audit();
        QTRY_VERIFY_WITH_TIMEOUT(shownRow(*window, u"qa.scenario.start", u"desk") >= 0, kAgentTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(shownRow(*window, u"breaker.mode", u"lead") >= 0, kAgentTimeoutMs);
        auto *table = child<QTableView>(window.get(), "auditTable");
        const int reasonColumn = audit->columnOf(QStringLiteral("reason"));
        QCOMPARE(
            table->model()->index(shownRow(*window, u"qa.scenario.start", u"desk"), reasonColumn).data().toString(),
            QStringLiteral("QA-12 storm without the lock"));
        const int everything = table->model()->rowCount();

        // By actor: the API answers with lead's lines only.
        auto *actor = child<QComboBox>(window.get(), "auditActor");
        QVERIFY(actor->findText(QStringLiteral("lead")) >= 0); // offered from what arrived
        actor->setEditText(QStringLiteral("lead"));
        QTest::mouseClick(child<QPushButton>(window.get(), "auditApply"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(table->model()->rowCount() > 0 && shownRow(*window, u"qa.scenario.start", u"desk") < 0,
                                 kAgentTimeoutMs);
        QCOMPARE(table->model()->rowCount(), 2);
        for (int row = 0; row < table->model()->rowCount(); ++row)
            QCOMPARE(table->model()->index(row, audit->columnOf(QStringLiteral("actor"))).data().toString(),
                     QStringLiteral("lead"));
        QVERIFY(table->model()->rowCount() < everything);

        // A part of the target, filtered in the console (the API matches targets exactly).
        QTest::keyClicks(child<QLineEdit>(window.get(), "auditTarget"), QStringLiteral("ALIPAY"));
        QCOMPARE(table->model()->rowCount(), 2);
        child<QLineEdit>(window.get(), "auditTarget")->setText(QStringLiteral("wechat"));
        QCOMPARE(table->model()->rowCount(), 0);
        child<QLineEdit>(window.get(), "auditTarget")->clear();
        // An end of the range before every line hides them all.
        child<QDateTimeEdit>(window.get(), "auditUntil")->setDateTime(QDateTime::currentDateTimeUtc().addDays(-1));
        QTest::mouseClick(child<QCheckBox>(window.get(), "auditUntilEnabled"), Qt::LeftButton);
        QCOMPARE(table->model()->rowCount(), 0);
        QTest::mouseClick(child<QCheckBox>(window.get(), "auditUntilEnabled"), Qt::LeftButton);
        QCOMPARE(table->model()->rowCount(), 2);

        QTemporaryDir dir;
        QString error;
        const QString csv = dir.filePath(QStringLiteral("audit.csv"));
        QVERIFY2(window->audit()->panel()->exportCsv(csv, &error), qPrintable(error));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY2(text.contains("breaker:gateway.alipay") && text.contains("audit drill INC-4")
                     && !text.contains("qa.scenario"),
                 text.constData());
    }

    // F11 enters the wall screen full screen, its figures at 48 pt or more showing the
    // stream's numbers and the chart plotting the dashboard's history over most of the
    // screen; Esc leaves, and F11 leaves too.
    void wallScreenEntersAndLeavesWithItsKey()
    {
        auto window = openConsole(kViewToken);
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        WallScreen *wall = window->wall();
        QVERIFY(!wall->isVisible());
        QApplication::setActiveWindow(window.get());
        QTest::keyClick(window.get(), Qt::Key_F11);
        QTRY_VERIFY(wall->isVisible());
        QVERIFY(wall->windowState().testFlag(Qt::WindowFullScreen));
        QCOMPARE(wall->screen()->geometry(), QRect(0, 0, 1920, 1080));
        QTRY_COMPARE(wall->geometry(), wall->screen()->geometry());
        QVERIFY(!wall->figures().isEmpty());
        for (QLabel *figure : wall->figures()) {
            QVERIFY2(figure->font().pointSizeF() >= 48.0, qPrintable(figure->objectName()));
            QVERIFY2(QFontInfo(figure->font()).pointSizeF() >= 48.0, qPrintable(figure->objectName()));
        }
        // The same numbers as the dashboard, live.
        auto *requests = child<QLabel>(wall, "wallRequests");
        QTRY_VERIFY_WITH_TIMEOUT(requests->text().toLongLong() > 0, kAgentTimeoutMs);
        const qint64 uniqueIndex = window->dashboard()->layerTotals()->total(Layer::UniqueIndex);
        QVERIFY(uniqueIndex > 0); // the storm of the first slot
        QTRY_COMPARE_WITH_TIMEOUT(child<QLabel>(wall, "wallLayer_unique_index")->text().toLongLong(), uniqueIndex,
                                  kAgentTimeoutMs);
        QCOMPARE(child<QLabel>(wall, "wallLayer_unique_index")->palette().color(QPalette::WindowText),
                 layerColor(Layer::UniqueIndex));
        // The plot fills the screen: most of its height and width.
        QTRY_VERIFY_WITH_TIMEOUT(wall->chart()->plottedPoints(Layer::UniqueIndex) > 0, kAgentTimeoutMs);
        QVERIFY2(wall->chart()->height() > wall->height() / 2 && wall->chart()->width() > wall->width() / 2,
                 qPrintable(QStringLiteral("%1x%2 of %3x%4")
                                .arg(wall->chart()->width())
                                .arg(wall->chart()->height())
                                .arg(wall->width())
                                .arg(wall->height())));

        QTest::keyClick(wall, Qt::Key_Escape);
        QTRY_VERIFY(!wall->isVisible());
        QTRY_VERIFY(window->isActiveWindow()); // back to the console
        QTest::keyClick(window.get(), Qt::Key_F11);
        QTRY_VERIFY(wall->isVisible());
        QTest::keyClick(wall, Qt::Key_F11);
        QTRY_VERIFY(!wall->isVisible());
    }

private:
    int flipBreaker(const char *mode, const QString &reason) const
    {
        QJsonObject body{{QStringLiteral("mode"), QLatin1String(mode)}, {QStringLiteral("reason"), reason}};
        if (qstrcmp(mode, "auto") != 0)
            body.insert(QStringLiteral("expires_in"), 600);
        return m_agent
            ->call("POST", QStringLiteral("/api/v1/breakers/gateway.alipay"),
                   QJsonDocument(body).toJson(QJsonDocument::Compact), kLead)
            .status;
    }

    /// The shown row of the audit table with that action and actor, -1 when none.
    static int shownRow(const MainWindow &window, QStringView action, QStringView actor)
    {
        const AuditModel *audit = window.audit()->audit();
        const QAbstractItemModel *shown = child<QTableView>(const_cast<MainWindow *>(&window), "auditTable")->model();
        for (int row = 0; row < shown->rowCount(); ++row) {
            if (shown->index(row, audit->columnOf(QStringLiteral("action"))).data().toString() == action
                && shown->index(row, audit->columnOf(QStringLiteral("actor"))).data().toString() == actor)
                return row;
        }
        return -1;
    }

    std::unique_ptr<MainWindow> openConsole(const QByteArray &token)
    {
        return openTestedConsole(m_agent->port(), token);
    }

    QString agentUrl() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_agent->port()); }

    AgentFixture m_agent;
};

int main(int argc, char *argv[])
{
    // The wall screen is for a war room's display: the offscreen platform's one screen is
    // 1920×1080 here instead of its default 800×600.
    QTemporaryDir screenDir;
    const QString screenConfig = screenDir.filePath(QStringLiteral("screen.json"));
    QFile screenFile(screenConfig);
    if (!screenFile.open(QIODevice::WriteOnly)
        || screenFile.write("{\"screens\":[{\"name\":\"wall\",\"x\":0,\"y\":0,\"width\":1920,\"height\":1080,"
                            "\"logicalDpi\":96,\"logicalBaseDpi\":96,\"dpr\":1}]}")
               < 0)
        return 2;
    screenFile.close();
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + screenConfig.toLocal8Bit());
    QApplication app(argc, argv);
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    QApplication::setOrganizationName(QStringLiteral("payonce-tests"));
    QApplication::setApplicationName(QStringLiteral("tst_consoleqa"));
    TestConsoleQa test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consoleqa.moc"
