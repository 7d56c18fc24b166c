// The console's parts without an agent (offscreen platform): every model under
// QAbstractItemModelTester through resets and live updates; the error classification the
// banner relies on; the rate history's bounds; the dashboard fed 10 000 metrics messages
// that went through shared/'s codec, its plot bounded by the history's capacity; CSV.

#include "console/models/breakersmodel.h"
#include "console/models/callbackdeliveriesmodel.h"
#include "console/models/compensationsmodel.h"
#include "console/models/csvexport.h"
#include "console/models/findingsmodel.h"
#include "console/models/layercolors.h"
#include "console/models/layertotalsmodel.h"
#include "console/models/localformat.h"
#include "console/models/ratehistory.h"
#include "console/models/refundsmodel.h"
#include "console/net/apierror.h"
#include "console/views/dashboardview.h"
#include "console/views/ratechart.h"
#include "console/views/tablepanel.h"

#include <QAbstractItemModelTester>
#include <QBuffer>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QTest>

#include <limits>

using namespace payonce;
using namespace payonce::console;

namespace {

/// JSON written with single quotes (Qt 6.4's moc misreads raw string literals).
QByteArray json(const char *singleQuoted)
{
    return QByteArray(singleQuoted).replace('\'', '"');
}

QJsonArray jsonArray(const char *singleQuoted)
{
    return QJsonDocument::fromJson(json(singleQuoted)).array();
}

StreamMetrics metricsWith(qint64 base, double rate)
{
    StreamMetrics m;
    for (Layer layer : allLayers) {
        m.duplicates.insert(layer, base + qint64(layer));
        m.rates.insert(layer, rate * (1 + int(layer)));
    }
    m.requests = base;
    m.latencyP50Ms = 1.5;
    m.latencyP99Ms = 9.0;
    m.breakerStates.insert(QStringLiteral("gateway.wechat"),
                           base % 2 ? QStringLiteral("open") : QStringLiteral("closed"));
    return m;
}

} // namespace

class TestConsoleModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void jsonModelsPassTheTester()
    {
        BreakersModel breakers;
        CallbackDeliveriesModel deliveries;
        FindingsModel findings;
        CompensationsModel compensations;
        QList<JsonTableModel *> models{&breakers, &deliveries, &findings, &compensations};
        std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
        std::vector<std::unique_ptr<TablePanel>> panels;
        for (JsonTableModel *model : models) {
            testers.push_back(std::make_unique<QAbstractItemModelTester>(
                model, QAbstractItemModelTester::FailureReportingMode::QtTest));
            panels.push_back(std::make_unique<TablePanel>(QStringLiteral("t"), model));
            testers.push_back(std::make_unique<QAbstractItemModelTester>(
                panels.back()->proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest));
        }
        breakers.setRows(
            jsonArray("[{'name':'gateway.wechat','state':'closed','mode':'auto','failure_rate':0.25,'calls':8},"
                      "{'name':'gateway.alipay','state':'open','mode':'forced_open','changed_by':'desk'}]"));
        deliveries.setRows(jsonArray("[{'received_at':'2026-11-29T10:00:00.000Z','channel':'wechat','pay_no':'P1',"
                                     "'verified':true,'layer':'unique_index','http_status':200,'order_no':null}]"));
        findings.setRows(jsonArray("[{'id':1,'kind':'double_payment','evidence':{'pay_nos':['A','B']}}]"));
        compensations.setRows(
            jsonArray("[{'id':3,'kind':'refund','status':'proposed','result':{}},{'id':4,'status':'executed'}]"));
        QCOMPARE(breakers.rowCount(), 2);
        QCOMPARE(breakers.rowOf(QStringLiteral("gateway.alipay")), 1);
        QCOMPARE(breakers.index(0, breakers.columnOf(QStringLiteral("failure_rate"))).data().toString(),
                 QStringLiteral("0.25"));
        QCOMPARE(breakers.index(0, 1).data(Qt::DecorationRole).value<QColor>(),
                 breakerStateColor(QStringLiteral("closed")));
        QSignalSpy changed(&breakers, &QAbstractItemModel::dataChanged);
        breakers.applyStates({{QStringLiteral("gateway.wechat"), QStringLiteral("open")},
                              {QStringLiteral("unknown"), QStringLiteral("open")}});
        QCOMPARE(changed.size(), 1);
        QCOMPARE(breakers.index(0, 1).data().toString(), QStringLiteral("open"));
        breakers.applyStates({{QStringLiteral("gateway.wechat"), QStringLiteral("open")}});
        QCOMPARE(changed.size(), 1); // nothing new, no signal

        const int layerColumn = deliveries.columnOf(QStringLiteral("layer"));
        QCOMPARE(deliveries.index(0, layerColumn).data(Qt::DecorationRole).value<QColor>(),
                 layerColor(Layer::UniqueIndex));
        QCOMPARE(deliveries.index(0, deliveries.columnOf(QStringLiteral("verified"))).data().toString(),
                 QStringLiteral("yes"));
        QCOMPARE(deliveries.index(0, deliveries.columnOf(QStringLiteral("order_no"))).data().toString(), QString());
        QCOMPARE(findings.index(0, findings.columnOf(QStringLiteral("evidence"))).data().toString(),
                 QString::fromUtf8(json("{'pay_nos':['A','B']}")));

        // Sorting by the raw value (ids as numbers) and filtering on any column.
        TablePanel &compensationPanel = *panels.at(3);
        compensationPanel.proxy()->sort(0, Qt::DescendingOrder);
        QCOMPARE(compensationPanel.proxy()->index(0, 0).data().toString(), QStringLiteral("4"));
        compensationPanel.filter()->setText(QStringLiteral("PROPOSED"));
        QCOMPARE(compensationPanel.proxy()->rowCount(), 1);
        QCOMPARE(compensationPanel.proxy()->index(0, 0).data().toString(), QStringLiteral("3"));
        // The export writes what the panel shows: the header and the one row left.
        QTemporaryDir dir;
        QString error;
        const QString csv = dir.filePath(QStringLiteral("compensations.csv"));
        QVERIFY2(compensationPanel.exportCsv(csv, &error), qPrintable(error));
        QFile written(csv);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = written.readAll().split('\n');
        QCOMPARE(lines.size(), 3); // two CRLF-ended lines
        QVERIFY(lines.at(0).startsWith("Id,Kind,order_no,Status,"));
        QVERIFY(lines.at(1).startsWith("3,refund,,proposed,"));
        QVERIFY(!compensationPanel.exportCsv(dir.filePath(QStringLiteral("no/such/folder.csv")), &error));

        for (JsonTableModel *model : models)
            model->setRows(QJsonArray{});
        QCOMPARE(compensations.rowCount(), 0);
    }

    void refundsOfAnOrderAddUp()
    {
        RefundsModel refunds;
        QAbstractItemModelTester tester(&refunds, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(refunds.summary(), QStringLiteral("No refund yet."));
        refunds.setRows(
            jsonArray("[{'refund_no':'RF3','status':'processing','amount':'10.00','partial':true,'items':[]},"
                      "{'refund_no':'RF2','status':'failed','amount':'5.00','partial':true,'items':[]},"
                      "{'refund_no':'RF1','status':'succeeded','amount':'20.00','partial':true,"
                      "'items':[{'sku_id':'SKU-1','qty':1}]}]"));
        QCOMPARE(refunds.rowCount(), 3);
        const RefundsModel::Totals t = refunds.totals();
        QCOMPARE(t.succeededFen, qint64(2000));
        QCOMPARE(t.openFen, qint64(1000));
        QCOMPARE(t.failedFen, qint64(500));
        QCOMPARE(refunds.summary(),
                 QStringLiteral("3 refund(s): 20.00 given back, 10.00 in flight, 5.00 failed (nothing went back)."));
        const int status = refunds.columnOf(QStringLiteral("status"));
        QCOMPARE(refunds.index(0, status).data(Qt::DecorationRole).value<QColor>(), QColor(0xff, 0xa5, 0x00));
        QCOMPARE(refunds.index(1, status).data(Qt::DecorationRole).value<QColor>(), QColor(0xd6, 0x27, 0x28));
        QVERIFY(!refunds.index(2, status).data(Qt::DecorationRole).isValid());
        QVERIFY(refunds.index(2, refunds.columnOf(QStringLiteral("items"))).data().toString().contains(u"SKU-1"));
    }

    // Money in the reader's way of writing it, from integer fen (never a double).
    void amountsAreWrittenTheLocaleWay_data()
    {
        QTest::addColumn<qint64>("fen");
        QTest::addColumn<QString>("locale");
        QTest::addColumn<QString>("shown");
        QTest::newRow("zh_CN grouping") << qint64(123456789) << QStringLiteral("zh_CN")
                                        << QStringLiteral("1,234,567.89");
        QTest::newRow("en_US grouping") << qint64(123456789) << QStringLiteral("en_US")
                                        << QStringLiteral("1,234,567.89");
        QTest::newRow("de_DE comma") << qint64(123456789) << QStringLiteral("de_DE") << QStringLiteral("1.234.567,89");
        QTest::newRow("C, no grouping") << qint64(123456789) << QStringLiteral("C") << QStringLiteral("1234567.89");
        QTest::newRow("one fen") << qint64(1) << QStringLiteral("zh_CN") << QStringLiteral("0.01");
        QTest::newRow("zero") << qint64(0) << QStringLiteral("en_US") << QStringLiteral("0.00");
        QTest::newRow("negative") << qint64(-2050) << QStringLiteral("en_US") << QStringLiteral("-20.50");
        // 2^53 + 1 fen: a double would round it to ...92.
        QTest::newRow("beyond a double") << qint64(9007199254740993) << QStringLiteral("C")
                                         << QStringLiteral("90071992547409.93");
        QTest::newRow("the smallest qint64")
            << std::numeric_limits<qint64>::min() << QStringLiteral("C") << QStringLiteral("-92233720368547758.08");
    }
    void amountsAreWrittenTheLocaleWay()
    {
        QFETCH(qint64, fen);
        QFETCH(QString, locale);
        QFETCH(QString, shown);
        QCOMPARE(localAmount(fen, QLocale(locale)), shown);
    }

    // An agent's time in the machine's zone, the locale's short date with seconds; what is
    // not a time stays as it is.
    void timesAreWrittenTheLocaleWay()
    {
        const QString wire = QStringLiteral("2026-12-02T07:00:05.000Z");
        const QDateTime local = QDateTime(QDate(2026, 12, 2), QTime(7, 0, 5), Qt::UTC).toLocalTime();
        const QLocale chinese(QStringLiteral("zh_CN"));
        QCOMPARE(localTime(wire, chinese), chinese.toString(local, QStringLiteral("yyyy/M/d HH:mm:ss t")));
        QCOMPARE(localTime(wire, QLocale(QStringLiteral("en_US"))),
                 QLocale(QStringLiteral("en_US")).toString(local, QStringLiteral("M/d/yy HH:mm:ss t")));
        QVERIFY(localTime(wire, chinese).contains(local.toString(QStringLiteral("HH:mm:05"))));
        QCOMPARE(localTime(QStringLiteral("soon"), chinese), QStringLiteral("soon"));
        QCOMPARE(localTime(QString(), chinese), QString());
    }

    void aRefundProposalIsBuiltFromWhatTheDeskTyped_data()
    {
        QTest::addColumn<QString>("amount");
        QTest::addColumn<QString>("items");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<QString>("body"); // empty: refused
        QTest::addColumn<QString>("refusal");
        QTest::newRow("the rest") << QString() << QString() << QStringLiteral("asked")
                                  << QStringLiteral("{'kind':'refund','order_no':'ORD-1','reason':'asked'}")
                                  << QString();
        QTest::newRow("amount") << QStringLiteral(" 20.5 ") << QString() << QStringLiteral("late delivery")
                                << QStringLiteral(
                                       "{'amount':'20.50','kind':'refund','order_no':'ORD-1','reason':'late delivery'}")
                                << QString();
        QTest::newRow("amount and items")
            << QStringLiteral("20.00") << QStringLiteral("SKU-1 x1, SKU-2 X 2") << QStringLiteral("returned")
            << QStringLiteral("{'amount':'20.00','items':[{'qty':1,'sku_id':'SKU-1'},{'qty':2,'sku_id':'SKU-2'}],"
                              "'kind':'refund','order_no':'ORD-1','reason':'returned'}")
            << QString();
        QTest::newRow("items without amount") << QString() << QStringLiteral("SKU-1 x1") << QStringLiteral("r")
                                              << QString() << QStringLiteral("with an amount");
        QTest::newRow("amount 0") << QStringLiteral("0.00") << QString() << QStringLiteral("r") << QString()
                                  << QStringLiteral("positive");
        QTest::newRow("negative") << QStringLiteral("-3.00") << QString() << QStringLiteral("r") << QString()
                                  << QStringLiteral("positive");
        QTest::newRow("three decimals") << QStringLiteral("1.005") << QString() << QStringLiteral("r") << QString()
                                        << QStringLiteral("positive");
        QTest::newRow("qty 0") << QStringLiteral("1.00") << QStringLiteral("SKU-1 x0") << QStringLiteral("r")
                               << QString() << QStringLiteral("at least 1");
        QTest::newRow("no qty") << QStringLiteral("1.00") << QStringLiteral("SKU-1") << QStringLiteral("r") << QString()
                                << QStringLiteral("not an item");
        QTest::newRow("sku twice") << QStringLiteral("1.00") << QStringLiteral("SKU-1 x1, SKU-1 x2")
                                   << QStringLiteral("r") << QString() << QStringLiteral("twice");
        QTest::newRow("no reason") << QStringLiteral("1.00") << QString() << QStringLiteral("  ") << QString()
                                   << QStringLiteral("Say why");
    }
    void aRefundProposalIsBuiltFromWhatTheDeskTyped()
    {
        QFETCH(QString, amount);
        QFETCH(QString, items);
        QFETCH(QString, reason);
        QFETCH(QString, body);
        QFETCH(QString, refusal);
        const RefundProposalInput input{QStringLiteral("ORD-1"), amount, items, reason};
        QString error;
        const auto built = input.body(&error);
        if (body.isEmpty()) {
            QVERIFY2(!built, qPrintable(QString::fromUtf8(QJsonDocument(built.value_or(QJsonObject{})).toJson())));
            QVERIFY2(error.contains(refusal), qPrintable(error));
            return;
        }
        QVERIFY2(built, qPrintable(error));
        QCOMPARE(*built, QJsonDocument::fromJson(json(body.toUtf8().constData())).object());
    }

    void layerTotalsPassTheTester()
    {
        LayerTotalsModel totals;
        QAbstractItemModelTester tester(&totals, QAbstractItemModelTester::FailureReportingMode::QtTest);
        TablePanel panel(QStringLiteral("layers"), &totals);
        QAbstractItemModelTester proxyTester(panel.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(totals.rowCount(), int(allLayers.size()));
        // Unsorted until asked: the layers in the order of the defence.
        QCOMPARE(panel.proxy()->index(0, 0).data().toString(), QStringLiteral("none"));
        QCOMPARE(panel.proxy()->index(int(allLayers.size()) - 1, 0).data().toString(), QStringLiteral("rejected"));
        totals.setMetrics(metricsWith(10, 0.5));
        QCOMPARE(totals.total(Layer::UniqueIndex), qint64(10 + int(Layer::UniqueIndex)));
        QCOMPARE(totals.index(int(Layer::Lock), LayerTotalsModel::LayerColumn).data().toString(),
                 QStringLiteral("lock"));
        QCOMPARE(totals.index(int(Layer::Lock), LayerTotalsModel::LayerColumn).data(Qt::DecorationRole).value<QColor>(),
                 layerColor(Layer::Lock));
        qint64 caught = 0;
        for (Layer layer : allLayers)
            caught += layer == Layer::None ? 0 : 10 + int(layer);
        QCOMPARE(totals.caughtTotal(), caught);
        panel.proxy()->sort(LayerTotalsModel::TotalColumn, Qt::DescendingOrder);
        QCOMPARE(panel.proxy()->index(0, 0).data().toString(), QStringLiteral("rejected"));
    }

    void errorsAreClassified_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("role");
        QTest::addColumn<QString>("saying");
        using Kind = ApiError::Kind;
        QTest::newRow("ok") << 200 << QByteArray("[]") << int(Kind::None) << QString() << QString();
        QTest::newRow("unreachable") << 0 << QByteArray() << int(Kind::Unreachable) << QString()
                                     << QStringLiteral("unreachable");
        QTest::newRow("401") << 401
                             << json(
                                    "{'error':{'code':'unauthenticated','message':'a valid bearer token is required'}}")
                             << int(Kind::Unauthenticated) << QString() << QStringLiteral("401");
        QTest::newRow("403 role")
            << 403 << json("{'error':{'code':'forbidden','message':'this needs the role operator; view has viewer'}}")
            << int(Kind::Forbidden) << QStringLiteral("operator") << QStringLiteral("needs the role operator");
        QTest::newRow("403 four eyes") << 403 << json("{'error':{'code':'four_eyes','message':'proposer'}}")
                                       << int(Kind::FourEyes) << QString() << QStringLiteral("Four-eyes");
        QTest::newRow("429 throttled") << 429
                                       << json("{'error':{'code':'too_many_requests','message':'too many failed "
                                               "authentications from your address'}}")
                                       << int(Kind::Throttled) << QString()
                                       << QStringLiteral("too many failed authentications");
        QTest::newRow("409") << 409 << json("{'error':{'code':'conflict','message':'already rejected'}}")
                             << int(Kind::Refused) << QString() << QStringLiteral("already rejected");
        QTest::newRow("500 not json") << 500 << QByteArray("boom") << int(Kind::Refused) << QString()
                                      << QStringLiteral("boom");
    }
    void errorsAreClassified()
    {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(int, kind);
        QFETCH(QString, role);
        QFETCH(QString, saying);
        const ApiError error = apiErrorFrom(status, body, QStringLiteral("Connection refused"));
        QCOMPARE(int(error.kind), kind);
        QCOMPARE(error.roleNeeded, role);
        QVERIFY2(error.describe().contains(saying), qPrintable(error.describe()));
    }

    void historyIsBounded()
    {
        RateHistory history(10000, 5);
        const QDateTime start = QDateTime::fromMSecsSinceEpoch(1700000000000LL, Qt::UTC);
        for (int i = 0; i < 8; ++i)
            history.add(start.addMSecs(i * 100), {{Layer::Lock, double(i)}});
        QCOMPARE(history.size(), 5); // capacity
        QCOMPARE(history.at(0).rates[std::size_t(Layer::Lock)], 3.0);
        history.add(start.addMSecs(100), {{Layer::Lock, 99.0}}); // out of order: ignored
        QCOMPARE(history.size(), 5);
        history.add(start.addMSecs(20000), {{Layer::Lock, 1.0}}); // window: the old ones go
        QCOMPARE(history.size(), 1);
        QCOMPARE(history.newestMs(), start.addMSecs(20000).toMSecsSinceEpoch());
    }

    // 10 000 metrics messages (100 ms apart: 1000 s, more than three windows), each through
    // the codec as from the wire, into the dashboard: the plot holds no more than the ring
    // buffer, spans at most five minutes, and ends at the newest message.
    void dashboardPlotStaysBounded()
    {
        DashboardView dashboard(nullptr);
        dashboard.resize(1000, 700);
        dashboard.show();
        const QDateTime start = QDateTime::fromMSecsSinceEpoch(1700000000000LL, Qt::UTC);
        constexpr int kMessages = 10000;
        for (int i = 1; i <= kMessages; ++i) {
            StreamMessage message;
            message.seq = i;
            message.at = start.addMSecs(qint64(i) * 100);
            message.body = metricsWith(i, double(i % 7));
            QString error;
            const auto decoded = decodeStreamMessage(encodeStreamMessage(message), &error);
            QVERIFY2(decoded, qPrintable(error));
            dashboard.applyMessage(*decoded);
            if (i % 1000 == 0)
                QCoreApplication::processEvents(); // the redraw timer gets its turns
        }
        dashboard.redrawChart();
        const RateHistory &history = dashboard.history();
        QVERIFY(history.size() <= history.capacity());
        QVERIFY(history.size() > 0);
        for (Layer layer : allLayers) {
            QCOMPARE(dashboard.chart()->plottedPoints(layer), history.size());
            QVERIFY(dashboard.chart()->plottedPoints(layer) <= RateHistory::kDefaultCapacity);
        }
        QCOMPARE(history.newestMs(), start.addMSecs(qint64(kMessages) * 100).toMSecsSinceEpoch());
        QVERIFY(history.newestMs() - history.at(0).atMs <= RateHistory::kDefaultWindowMs);
        QCOMPARE(dashboard.layerTotals()->total(Layer::None), qint64(kMessages));
        QCOMPARE(dashboard.findChild<QLabel *>(QStringLiteral("requestsValue"))->text(), QLocale().toString(kMessages));
        QCOMPARE(dashboard.findChild<QLabel *>(QStringLiteral("breakerLight_gateway.wechat"))
                     ->property("breakerState")
                     .toString(),
                 QStringLiteral("closed"));
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("chart.png"));
        QVERIFY(dashboard.saveChartPng(png));
        QVERIFY(QImage(png).width() > 100);
        dashboard.clearHistory();
        QCOMPARE(dashboard.history().size(), 0);
        QCOMPARE(dashboard.chart()->plottedPoints(Layer::None), 0);
    }

    void csvQuotesWhatNeedsIt()
    {
        FindingsModel findings;
        findings.setRows(jsonArray(
            "[{'id':1,'kind':'double_payment','evidence':{'a':'x,y'},'order_no':'He said \\u0022no\\u0022'}]"));
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        QVERIFY(writeCsv(findings, buffer));
        const QList<QByteArray> lines = buffer.data().split('\n');
        QVERIFY(lines.at(0).startsWith("Id,Kind,order_no,pay_no,Evidence,"));
        QVERIFY2(lines.at(1).startsWith("1,double_payment,\"He said \"\"no\"\"\",,\"{\"\"a\"\":\"\"x,y\"\"}\","),
                 lines.at(1).constData());
        QVERIFY(buffer.data().endsWith("\r\n"));
    }
};

QTEST_MAIN(TestConsoleModels)
#include "tst_consolemodels.moc"
