// The QA view's and the audit trail's models without an agent: each under
// QAbstractItemModelTester through resets and live updates, fed answers with missing,
// mistyped and unknown fields (never a crash, zeros and empty cells instead); the verdict
// in words; the audit proxy's target and end-of-range filters; the scenario request's body.

#include "console/models/auditfilterproxy.h"
#include "console/models/auditmodel.h"
#include "console/models/layercolors.h"
#include "console/models/localformat.h"
#include "console/models/qarunsmodel.h"
#include "console/models/scenarioreportmodel.h"
#include "console/models/scenariorequest.h"
#include "console/models/scenariotext.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace payonce;
using namespace payonce::console;

namespace {

/// JSON written with single quotes (Qt 6.4's moc misreads raw string literals).
QJsonDocument json(const char *singleQuoted)
{
    return QJsonDocument::fromJson(QByteArray(singleQuoted).replace('\'', '"'));
}

} // namespace

class TestConsoleQaModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void runsModelLiftsNestedFields()
    {
        QaRunsModel runs;
        QAbstractItemModelTester tester(&runs, QAbstractItemModelTester::FailureReportingMode::QtTest);
        runs.setRuns(json("[{'scenario_id':'qa-1','kind':'retry_storm','status':'running',"
                          "'params':{'orders':10,'duplicates':3,'disable_layers':['lock','unique_index']},"
                          "'progress':{'phase':'retry_storm'}},"
                          "7, {'scenario_id':'qa-0','params':'not an object','progress':null}]")
                         .array());
        QCOMPARE(runs.rowCount(), 2);
        QCOMPARE(runs.index(0, runs.columnOf(QStringLiteral("orders"))).data().toString(), QStringLiteral("10"));
        QCOMPARE(runs.index(0, runs.columnOf(QStringLiteral("disable_layers"))).data().toString(),
                 QStringLiteral("lock, unique_index"));
        QCOMPARE(runs.index(0, runs.columnOf(QStringLiteral("phase"))).data().toString(),
                 QStringLiteral("retry_storm"));
        QCOMPARE(runs.index(1, runs.columnOf(QStringLiteral("disable_layers"))).data().toString(),
                 QStringLiteral("none"));
        QCOMPARE(runs.index(1, runs.columnOf(QStringLiteral("orders"))).data().toString(), QString());

        QVERIFY(!runs.applyProgress(QStringLiteral("qa-unknown"), {}));
        QVERIFY(runs.applyProgress(QStringLiteral("qa-1"), json("{'phase':'settling'}").object()));
        QCOMPARE(runs.rowObject(0).value(QStringLiteral("status")).toString(), QStringLiteral("running"));
        QVERIFY(runs.applyProgress(QStringLiteral("qa-1"), json("{'phase':'passed'}").object()));
        QCOMPARE(runs.rowObject(0).value(QStringLiteral("status")).toString(), QStringLiteral("passed"));
        QCOMPARE(runs.index(0, runs.columnOf(QStringLiteral("status"))).data(Qt::DecorationRole).value<QColor>(),
                 scenarioStatusColor(QStringLiteral("passed")));
    }

    // A run whose agent died: the event another agent publishes (phase abandoned, the dead
    // agent named) ends it in the list, in a colour of its own, and says so in words.
    void abandonedRunEndsWithItsAgentNamed()
    {
        QaRunsModel runs;
        QAbstractItemModelTester tester(&runs, QAbstractItemModelTester::FailureReportingMode::QtTest);
        runs.setRuns(
            json("[{'scenario_id':'qa-2','status':'running','agent_id':'agent-1','progress':{'phase':'retry_storm'}}]")
                .array());
        QCOMPARE(runs.index(0, runs.columnOf(QStringLiteral("agent_id"))).data().toString(), QStringLiteral("agent-1"));
        QVERIFY(runs.applyProgress(QStringLiteral("qa-2"),
                                   json("{'phase':'abandoned','agent_id':'agent-1','orders':4}").object()));
        QCOMPARE(runs.rowObject(0).value(QStringLiteral("status")).toString(), QStringLiteral("abandoned"));
        const QColor abandoned = scenarioStatusColor(QStringLiteral("abandoned"));
        QCOMPARE(runs.index(0, runs.columnOf(QStringLiteral("status"))).data(Qt::DecorationRole).value<QColor>(),
                 abandoned);
        for (const char *other : {"passed", "failed", "error", "running"})
            QVERIFY(abandoned != scenarioStatusColor(QLatin1String(other)));
        QVERIFY(isFinalScenarioPhase(QStringLiteral("abandoned")));
        QVERIFY(!isFinalScenarioPhase(QStringLiteral("settling")));
        QCOMPARE(abandonedInWords(json("{'status':'abandoned','agent_id':'agent-1',"
                                       "'finished_at':'2026-12-02T07:00:05.000Z'}")
                                      .object()),
                 QStringLiteral("ABANDONED — agent agent-1 stopped renewing its lease, which ended at ")
                     + localTime(QStringLiteral("2026-12-02T07:00:05.000Z")));
        QCOMPARE(abandonedInWords({}), QStringLiteral("ABANDONED — agent (unnamed) stopped renewing its lease, which "
                                                      "ended at an unknown time"));
    }

    void reportModelShowsEveryLayerInItsColour()
    {
        ScenarioReportModel report;
        QAbstractItemModelTester tester(&report, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(report.rowCount(), 0);
        report.setReport(json("{'by_layer':{'none':10,'unique_index':30,'lock':'many','state_machine':-4},"
                              "'confirm_layers':{'none':10,'idempotency_key/503':2,'no_answer':1}}")
                             .object());
        QCOMPARE(report.rowCount(), int(allLayers.size()) + 2); // + idempotency_key/503, no_answer
        QCOMPARE(report.deliveries(QStringLiteral("unique_index")), 30);
        QCOMPARE(report.deliveries(QStringLiteral("lock")), 0);          // mistyped: zero
        QCOMPARE(report.deliveries(QStringLiteral("state_machine")), 0); // negative: zero
        QCOMPARE(report.index(report.rowOf(QStringLiteral("side_effect")), ScenarioReportModel::DeliveriesColumn)
                     .data()
                     .toString(),
                 QStringLiteral("0"));
        const int replayed = report.rowOf(QStringLiteral("idempotency_key/503"));
        QVERIFY(replayed >= 0);
        QCOMPARE(report.index(replayed, ScenarioReportModel::ConfirmsColumn).data().toString(), QStringLiteral("2"));
        QCOMPARE(report.index(replayed, ScenarioReportModel::LayerColumn).data(Qt::DecorationRole).value<QColor>(),
                 layerColor(Layer::IdempotencyKey));
        QCOMPARE(report.index(report.rowOf(QStringLiteral("unique_index")), ScenarioReportModel::LayerColumn)
                     .data(Qt::DecorationRole)
                     .value<QColor>(),
                 layerColor(Layer::UniqueIndex));
        QCOMPARE(report.index(report.rowOf(QStringLiteral("no_answer")), ScenarioReportModel::LayerColumn)
                     .data(Qt::DecorationRole)
                     .value<QColor>(),
                 QColor(Qt::gray));
        report.setReport({});
        QCOMPARE(report.rowCount(), 0);
    }

    void verdictInWords_data()
    {
        QTest::addColumn<QByteArray>("report");
        QTest::addColumn<QString>("headline");
        QTest::newRow("passed") << QByteArray("{'passed':true,'orders':10,'paid_once':10,'double_effects':0}")
                                << QStringLiteral("PASS — 0 double effects");
        QTest::newRow("one double effect")
            << QByteArray("{'passed':false,'orders':10,'paid_once':10,'double_effects':1}")
            << QStringLiteral("FAIL — 1 double effect");
        QTest::newRow("lost and missing")
            << QByteArray("{'passed':false,'orders':10,'paid_once':8,'double_effects':2,'missing_effects':1,'lost':2}")
            << QStringLiteral(
                   "FAIL — 2 double effects, 1 missing effect, 2 lost orders, 8 of 10 orders paid exactly once");
        QTest::newRow("empty") << QByteArray("{}") << QStringLiteral("FAIL — 0 double effects");
        QTest::newRow("mistyped") << QByteArray("{'passed':'yes','double_effects':'none'}")
                                  << QStringLiteral("FAIL — 0 double effects");
    }
    void verdictInWords()
    {
        QFETCH(QByteArray, report);
        QFETCH(QString, headline);
        const ScenarioVerdict verdict = scenarioVerdict(json(report.constData()).object());
        QCOMPARE(verdict.headline, headline);
        QCOMPARE(verdict.passed, headline.startsWith(u"PASS"));
    }

    void progressInWords()
    {
        const QJsonObject progress =
            json("{'phase':'retry_storm','orders':10,'created':10,'confirmed':9,'paid_at_sim':4}").object();
        QCOMPARE(describeProgress(progress),
                 QStringLiteral("retry_storm: 4 of 10 orders paid at the platform, 9 confirmed, 10 created"));
        QCOMPARE(progressPercent(progress), 40);
        QCOMPARE(progressPercent(json("{'orders':0,'paid_at_sim':5}").object()), 0);
        QCOMPARE(progressPercent(json("{'orders':2,'paid_at_sim':5}").object()), 100);
        QVERIFY(describeProgress({}).startsWith(u"starting:"));
    }

    void auditProxyFiltersTargetAndEnd()
    {
        AuditModel audit;
        AuditFilterProxy proxy;
        proxy.setSourceModel(&audit);
        QAbstractItemModelTester sourceTester(&audit, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        audit.setRows(
            json("[{'id':3,'at':'2026-11-29T12:00:00.000Z','actor':'lead','action':'breaker.mode',"
                 "'target':'breaker:gateway.alipay','before':{'mode':'auto'}},"
                 "{'id':2,'at':'2026-11-29T11:00:00.000Z','actor':'desk','action':'qa.scenario.start',"
                 "'target':'qa:qa-1'},"
                 "{'id':1,'at':'yesterday','actor':'desk','action':'callback.replay','target':'callback:wechat:P1'}]")
                .array());
        QCOMPARE(proxy.rowCount(), 3);
        QCOMPARE(audit.distinctValues(QStringLiteral("actor")),
                 (QStringList{QStringLiteral("desk"), QStringLiteral("lead")}));
        QCOMPARE(audit.index(0, audit.columnOf(QStringLiteral("before"))).data().toString(),
                 QStringLiteral("{\"mode\":\"auto\"}"));
        proxy.setTargetContains(QStringLiteral("ALIPAY"));
        QCOMPARE(proxy.rowCount(), 1);
        proxy.setTargetContains({});
        proxy.setUntil(QDateTime(QDate(2026, 11, 29), QTime(11, 30), Qt::UTC));
        // 11:00 is before the end; "yesterday" is no time and stays shown.
        QCOMPARE(proxy.rowCount(), 2);
        proxy.setUntil({});
        QCOMPARE(proxy.rowCount(), 3);
        audit.setRows(QJsonArray{});
        QCOMPARE(proxy.rowCount(), 0);
    }

    void requestBody()
    {
        ScenarioRequest request;
        request.kind = QStringLiteral("concurrent_burst");
        request.disableLayers = {QStringLiteral("lock")};
        request.targets = {QStringLiteral("http://127.0.0.1:8080")};
        QVERIFY(!request.toJson().contains(QStringLiteral("reason")));
        request.reason = QStringLiteral("  QA-1  ");
        const QJsonObject body = request.toJson();
        QCOMPARE(body.value(QStringLiteral("reason")).toString(), QStringLiteral("QA-1"));
        QCOMPARE(body.value(QStringLiteral("disable_layers")).toArray(), QJsonArray{QStringLiteral("lock")});
        QCOMPARE(body.value(QStringLiteral("time_scale")).toDouble(), 0.001);
        QVERIFY2(request.plan().contains(u"switched off for its orders: lock"), qPrintable(request.plan()));
    }
};

QTEST_MAIN(TestConsoleQaModels)
#include "tst_consoleqamodels.moc"
