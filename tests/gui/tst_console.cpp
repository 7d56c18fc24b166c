// payonce-console against a real payonce-agent (SQLite, payonce-sim beside it, three
// tokens: view / desk (operator) / lead (approver)), driven through its widgets on the
// offscreen platform: the dashboard's counters and plot move while the simulator sends
// duplicate notifications; a replay shows its dry run, writes nothing until confirmed,
// then reaches the agent (its audit log shows actor and reason); a breaker forced from one
// console changes the agent's state and a second console sees it live; an approval by a
// second person executes while a self-approval shows the four-eyes explanation; a role
// too low and a refused token show the banner. Every model (and every proxy) of every
// window runs under QAbstractItemModelTester meanwhile. The slots run in order; the
// refused token comes last, because the agent throttles an address after ten failed
// authentications and every request of this test comes from 127.0.0.1.

#include "agentconfig.h"
#include "agentfixture.h"
#include "consoletestsupport.h"
#include "storagefixture.h"

#include "console/app/connectiondialog.h"
#include "console/app/mainwindow.h"
#include "console/models/breakersmodel.h"
#include "console/models/callbackdeliveriesmodel.h"
#include "console/models/compensationsmodel.h"
#include "console/models/findingsmodel.h"
#include "console/models/layertotalsmodel.h"
#include "console/views/breakersview.h"
#include "console/views/callbacksview.h"
#include "console/views/compensationsview.h"
#include "console/views/dashboardview.h"
#include "console/views/ratechart.h"
#include "console/views/tablepanel.h"

#include "support/serverharness.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
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

int rowWithId(const JsonTableModel *model, qint64 id)
{
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->rowObject(row).value(QStringLiteral("id")).toInteger() == id)
            return row;
    }
    return -1;
}

} // namespace

class TestConsole : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            streamEvery(100),
            // No patrol or closer: every finding and compensation is this test's doing.
            noPatrolTimer(),
            noOrderCloser(),
        };
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(Dialect::Sqlite, options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void dashboardMovesWhileDuplicatesAreSent()
    {
        auto window = openConsole(kViewToken);
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        QLabel *requests = child<QLabel>(window.get(), "requestsValue");
        QTRY_VERIFY_WITH_TIMEOUT(QLocale().toLongLong(requests->text()) > 0, kAgentTimeoutMs);
        LayerTotalsModel *totals = window->dashboard()->layerTotals();
        const qint64 caughtBefore = totals->caughtTotal();
        const qint64 requestsBefore = QLocale().toLongLong(requests->text());
        window->dashboard()->redrawChart();
        const double plottedBefore = plottedCaught(*window);

        payWithDuplicates(QStringLiteral("ORD-CON-DASH"), QStringLiteral("SKU-CON-DASH"), 5);

        QTRY_VERIFY_WITH_TIMEOUT(totals->caughtTotal() >= caughtBefore + 4, kAgentTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(QLocale().toLongLong(requests->text()) > requestsBefore, kAgentTimeoutMs);
        // What the table shows is what the model counts.
        auto *table = child<QTableView>(window.get(), "layerTotalsTable");
        qint64 shownCaught = 0;
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            if (table->model()->index(row, LayerTotalsModel::LayerColumn).data().toString() != u"none")
                shownCaught += table->model()->index(row, LayerTotalsModel::TotalColumn).data().toLongLong();
        }
        QCOMPARE(shownCaught, totals->caughtTotal());
        // The plot moved: some layer that caught had a positive rate plotted.
        QTRY_VERIFY_WITH_TIMEOUT(plottedCaught(*window) > plottedBefore, kAgentTimeoutMs);
        QVERIFY(window->dashboard()->chart()->plottedPoints(Layer::UniqueIndex)
                <= window->dashboard()->history().capacity());
        QVERIFY(child<QLabel>(window.get(), "breakerLight_gateway.wechat"));
        QTRY_VERIFY_WITH_TIMEOUT(child<QLabel>(window.get(), "outboxPendingValue")->text() != u"–", kAgentTimeoutMs);
    }

    void replayShowsTheDryRunThenReachesTheAgent()
    {
        const QString orderNo = QStringLiteral("ORD-CON-REPLAY");
        payWithDuplicates(orderNo, QStringLiteral("SKU-CON-REPLAY"), 0);
        auto window = openConsole(kDeskToken);
        child<QAction>(window.get(), "showView2")->trigger();
        QCOMPARE(window->views()->currentWidget(), window->callbacks());
        child<QComboBox>(window.get(), "callbackQueryKind")->setCurrentText(QStringLiteral("order_no"));
        QTest::keyClicks(child<QLineEdit>(window.get(), "callbackQuery"), orderNo);
        QTest::mouseClick(child<QPushButton>(window.get(), "callbackSearch"), Qt::LeftButton);
        CallbackDeliveriesModel *deliveries = window->callbacks()->deliveries();
        QTRY_VERIFY_WITH_TIMEOUT(deliveries->rowCount() >= 1, kAgentTimeoutMs);
        const int layerColumn = deliveries->columnOf(QStringLiteral("layer"));
        QCOMPARE(deliveries->index(0, layerColumn).data().toString(), QStringLiteral("none"));
        QVERIFY(child<QLabel>(window.get(), "callbackLog")->text().contains(u"processed"));
        const QString payNo = deliveries->rowObject(0).value(QStringLiteral("pay_no")).toString();
        QVERIFY(!payNo.isEmpty());
        const QString target = QStringLiteral("callback:wechat:") + payNo;

        QVERIFY(selectSourceRow(child<TablePanel>(window.get(), "deliveriesPanel"), 0));
        QTest::mouseClick(child<QPushButton>(window.get(), "replayButton"), Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(window.get()));
        QVERIFY(answerReasonDialog(window.get(), QStringLiteral("ticket UI-7")));
        QMessageBox *confirm = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((confirm = window->findChild<QMessageBox *>(QStringLiteral("replayConfirmDialog")))
                                     && confirm->isVisible(),
                                 kAgentTimeoutMs);
        // The dry run: an absorbed replay, decided by the unique index, changing nothing —
        // and nothing written, not even an audit row.
        QVERIFY2(confirm->text().contains(u"Dry run") && confirm->text().contains(u"unique_index"),
                 qPrintable(confirm->text()));
        QVERIFY2(confirm->text().contains(u"Rows that would change:\nnone"), qPrintable(confirm->text()));
        QCOMPARE(auditRows(QStringLiteral("callback.replay"), target).size(), 0);

        QTest::mouseClick(confirm->button(QMessageBox::Ok), Qt::LeftButton);
        QLabel *result = child<QLabel>(window.get(), "replayResult");
        QTRY_VERIFY_WITH_TIMEOUT(result->text().startsWith(u"Replayed"), kAgentTimeoutMs);
        QVERIFY2(result->text().contains(u"success") && result->text().contains(u"unique_index"),
                 qPrintable(result->text()));
        const QJsonArray audit = auditRows(QStringLiteral("callback.replay"), target);
        QCOMPARE(audit.size(), 1);
        QCOMPARE(audit.first().toObject().value(QStringLiteral("actor")).toString(), QStringLiteral("desk"));
        QCOMPARE(audit.first().toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("ticket UI-7"));
    }

    void breakerFlipReachesTheAgentAndASecondConsole()
    {
        auto desk = openConsole(kDeskToken);
        auto other = openConsole(kViewToken);
        QTRY_COMPARE_WITH_TIMEOUT(other->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        BreakersModel *deskBreakers = desk->breakers()->breakers();
        BreakersModel *otherBreakers = other->breakers()->breakers();
        QTRY_VERIFY_WITH_TIMEOUT(deskBreakers->rowOf(QStringLiteral("gateway.wechat")) >= 0, kAgentTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(otherBreakers->rowOf(QStringLiteral("gateway.wechat")) >= 0, kAgentTimeoutMs);
        QCOMPARE(breakerField(*otherBreakers, "mode"), QStringLiteral("auto"));

        // The keyboard: Ctrl+3 is the breakers view.
        QApplication::setActiveWindow(desk.get());
        QTest::keyClick(desk.get(), Qt::Key_3, Qt::ControlModifier);
        QTRY_COMPARE(desk->views()->currentWidget(), desk->breakers());
        QVERIFY(selectSourceRow(child<TablePanel>(desk.get(), "breakersPanel"),
                                deskBreakers->rowOf(QStringLiteral("gateway.wechat"))));
        QTest::mouseClick(child<QPushButton>(desk.get(), "forceOpenButton"), Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(desk.get()));
        QVERIFY(answerReasonDialog(desk.get(), QStringLiteral("gateway flapping, INC-9"), 15));

        // The agent's own state, as GET /api/v1/breakers reports it.
        QTRY_VERIFY_WITH_TIMEOUT(agentBreaker(QStringLiteral("gateway.wechat")).value(QStringLiteral("mode")).toString()
                                     == u"forced_open",
                                 kAgentTimeoutMs);
        const QJsonObject forced = agentBreaker(QStringLiteral("gateway.wechat"));
        QCOMPARE(forced.value(QStringLiteral("changed_by")).toString(), QStringLiteral("desk"));
        QCOMPARE(forced.value(QStringLiteral("reason")).toString(), QStringLiteral("gateway flapping, INC-9"));
        QVERIFY(!forced.value(QStringLiteral("expires_at")).toString().isEmpty());
        // The second console never asked: the stream's event made it fetch.
        QTRY_COMPARE_WITH_TIMEOUT(breakerField(*otherBreakers, "mode"), QStringLiteral("forced_open"), kAgentTimeoutMs);
        QCOMPARE(breakerField(*otherBreakers, "changed_by"), QStringLiteral("desk"));
        QTRY_COMPARE_WITH_TIMEOUT(breakerField(*otherBreakers, "state"), QStringLiteral("open"), kAgentTimeoutMs);
        QVERIFY(
            child<QLabel>(other.get(), "breakerResult")->text().contains(u"desk set gateway.wechat to forced_open"));

        // Back to auto, from the UI as well.
        QTest::mouseClick(child<QPushButton>(desk.get(), "autoButton"), Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(desk.get()));
        QVERIFY(answerReasonDialog(desk.get(), QStringLiteral("gateway stable again")));
        QTRY_VERIFY_WITH_TIMEOUT(agentBreaker(QStringLiteral("gateway.wechat")).value(QStringLiteral("mode")).toString()
                                     == u"auto",
                                 kAgentTimeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(breakerField(*otherBreakers, "mode"), QStringLiteral("auto"), kAgentTimeoutMs);
    }

    void approvalNeedsASecondPerson()
    {
        const QString orderNo = QStringLiteral("ORD-CON-COMP");
        payWithDuplicates(orderNo, QStringLiteral("SKU-CON-COMP"), 0);
        const qint64 byDesk = propose(kDeskToken, orderNo, QStringLiteral("freeze_coupon"),
                                      QStringLiteral("coupon twice"));
        const qint64 byLead = propose(kLeadToken, orderNo, QStringLiteral("reverse_points"),
                                      QStringLiteral("points twice"));
        QVERIFY(byDesk > 0 && byLead > 0);

        auto lead = openConsole(kLeadToken);
        child<QAction>(lead.get(), "showView4")->trigger();
        CompensationsModel *queue = lead->compensations()->compensations();
        QTRY_VERIFY_WITH_TIMEOUT(rowWithId(queue, byDesk) >= 0 && rowWithId(queue, byLead) >= 0, kAgentTimeoutMs);
        auto *panel = child<TablePanel>(lead.get(), "compensationsPanel");
        QLabel *message = child<QLabel>(lead.get(), "decisionMessage");

        // desk proposed, lead approves: executed.
        QVERIFY(selectSourceRow(panel, rowWithId(queue, byDesk)));
        QTest::mouseClick(child<QPushButton>(lead.get(), "approveButton"), Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(lead.get()));
        QVERIFY(answerReasonDialog(lead.get(), QStringLiteral("checked the coupon ledger")));
        QTRY_VERIFY_WITH_TIMEOUT(message->text().contains(QStringLiteral("Compensation %1 is executed").arg(byDesk)),
                                 kAgentTimeoutMs);
        const QJsonObject executed = agentCompensation(byDesk);
        QCOMPARE(executed.value(QStringLiteral("status")).toString(), QStringLiteral("executed"));
        QCOMPARE(executed.value(QStringLiteral("decided_by")).toString(), QStringLiteral("lead"));
        QCOMPARE(executed.value(QStringLiteral("decision_reason")).toString(),
                 QStringLiteral("checked the coupon ledger"));
        // The queue no longer lists it; the executed list does.
        QTRY_VERIFY_WITH_TIMEOUT(rowWithId(queue, byDesk) < 0, kAgentTimeoutMs);

        // lead proposed, lead approves: the four-eyes rule, explained; nothing decided.
        QVERIFY(selectSourceRow(panel, rowWithId(queue, byLead)));
        QTest::mouseClick(child<QPushButton>(lead.get(), "approveButton"), Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(lead.get()));
        QVERIFY(answerReasonDialog(lead.get(), QStringLiteral("my own")));
        QTRY_VERIFY_WITH_TIMEOUT(message->text().contains(u"Four-eyes rule"), kAgentTimeoutMs);
        QVERIFY2(message->text().contains(u"another approver must decide it"), qPrintable(message->text()));
        QCOMPARE(agentCompensation(byLead).value(QStringLiteral("status")).toString(), QStringLiteral("proposed"));
        // The four-eyes refusal is not a connection problem: no banner.
        QVERIFY(!child<QLabel>(lead.get(), "connectionBanner")->isVisible());

        child<QComboBox>(lead.get(), "compensationStatus")->setCurrentIndex(1); // executed
        QTRY_VERIFY_WITH_TIMEOUT(rowWithId(queue, byDesk) >= 0 && rowWithId(queue, byLead) < 0, kAgentTimeoutMs);
    }

    // Extras written behind the side-effect keys' back (raw SQL), found by a reconciliation
    // run: the console lists the open finding with its evidence and the patrol's proposal.
    void findingsShowTheirEvidence()
    {
        const QString orderNo = QStringLiteral("ORD-CON-FIND");
        payWithDuplicates(orderNo, QStringLiteral("SKU-CON-FIND"), 0);
        QString error;
        QVERIFY2(raiseEffectMismatch(*m_agent, m_agent.database(), orderNo, &error), qPrintable(error));

        auto viewer = openConsole(kViewToken);
        child<QAction>(viewer.get(), "showView4")->trigger();
        QTest::mouseClick(child<QPushButton>(viewer.get(), "refreshCompensations"), Qt::LeftButton);
        FindingsModel *findings = viewer->compensations()->findings();
        const auto findingRow = [&] {
            for (int row = 0; row < findings->rowCount(); ++row) {
                if (findings->rowObject(row).value(QStringLiteral("order_no")).toString() == orderNo)
                    return row;
            }
            return -1;
        };
        QTRY_VERIFY_WITH_TIMEOUT(findingRow() >= 0, kAgentTimeoutMs);
        const int row = findingRow();
        QCOMPARE(findings->index(row, findings->columnOf(QStringLiteral("kind"))).data().toString(),
                 QStringLiteral("effect_mismatch"));
        const QString evidence = findings->index(row, findings->columnOf(QStringLiteral("evidence"))).data().toString();
        QVERIFY2(evidence.contains(u"points") && evidence.contains(u"\"found\":200"), qPrintable(evidence));
        // The patrol's proposal waits in the queue for an approver.
        CompensationsModel *queue = viewer->compensations()->compensations();
        bool proposedByPatrol = false;
        for (int r = 0; r < queue->rowCount(); ++r) {
            const QJsonObject c = queue->rowObject(r);
            proposedByPatrol = proposedByPatrol
                               || (c.value(QStringLiteral("order_no")).toString() == orderNo
                                   && c.value(QStringLiteral("proposed_by")).toString() == u"system:patrol");
        }
        QVERIFY(proposedByPatrol);
    }

    void roleTooLowShowsTheBannerNamingTheRole()
    {
        auto viewer = openConsole(kViewToken);
        BreakersModel *breakers = viewer->breakers()->breakers();
        QTRY_VERIFY_WITH_TIMEOUT(breakers->rowOf(QStringLiteral("gateway.alipay")) >= 0, kAgentTimeoutMs);
        QLabel *banner = child<QLabel>(viewer.get(), "connectionBanner");
        QVERIFY(!banner->isVisible());
        QVERIFY(selectSourceRow(child<TablePanel>(viewer.get(), "breakersPanel"),
                                breakers->rowOf(QStringLiteral("gateway.alipay"))));
        QTest::mouseClick(child<QPushButton>(viewer.get(), "forceClosedButton"), Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(viewer.get()));
        QVERIFY(answerReasonDialog(viewer.get(), QStringLiteral("viewer tries"), 5));
        QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), kAgentTimeoutMs);
        QVERIFY2(banner->text().contains(u"403") && banner->text().contains(u"needs the role operator"),
                 qPrintable(banner->text()));
        QCOMPARE(agentBreaker(QStringLiteral("gateway.alipay")).value(QStringLiteral("mode")).toString(),
                 QStringLiteral("auto"));
    }

    // Nothing listens at the URL: the banner says unreachable, the status bar that the
    // stream is waiting to reconnect.
    void unreachableAgentShowsTheBanner()
    {
        MainWindow window;
        window.show();
        window.connectTo(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(freeLoopbackPort())), kViewToken);
        QLabel *banner = child<QLabel>(&window, "connectionBanner");
        QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), kAgentTimeoutMs);
        QVERIFY2(banner->text().contains(u"unreachable"), qPrintable(banner->text()));
        QTRY_COMPARE_WITH_TIMEOUT(window.stream()->state(), StreamClient::State::WaitingToReconnect, kAgentTimeoutMs);
        QVERIFY2(child<QLabel>(&window, "connectionState")->text().contains(u"reconnecting"),
                 qPrintable(child<QLabel>(&window, "connectionState")->text()));
    }

    // The connection dialog: the URL is remembered for next time, the token is not.
    void connectionDialogRemembersTheUrlOnly()
    {
        MainWindow window;
        window.show();
        window.askConnection();
        QDialog *dialog = nullptr;
        QTRY_VERIFY((dialog = window.findChild<QDialog *>(QStringLiteral("connectionDialog"))) && dialog->isVisible());
        const QString url = QStringLiteral("http://127.0.0.1:%1").arg(m_agent->port());
        auto *urlBox = child<QComboBox>(dialog, "agentUrl");
        urlBox->setCurrentText(url);
        QTest::keyClicks(child<QLineEdit>(dialog, "agentToken"), QStringLiteral("view-token"));
        QCOMPARE(child<QLineEdit>(dialog, "agentToken")->echoMode(), QLineEdit::Password);
        dialog->accept();
        QTRY_COMPARE_WITH_TIMEOUT(window.stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(window.breakers()->breakers()->rowCount() > 0, kAgentTimeoutMs);
        QSettings settings;
        settings.sync();
        QVERIFY(settings.fileName().startsWith(QDir::tempPath()));
        QCOMPARE(ConnectionDialog::rememberedUrls(), QStringList{url});
        QFile stored(settings.fileName());
        QVERIFY2(stored.open(QIODevice::ReadOnly), qPrintable(settings.fileName()));
        const QByteArray text = stored.readAll();
        QVERIFY(text.contains(url.toUtf8()));
        QVERIFY(!text.contains(kViewToken));
        // A second dialog offers the remembered URL first.
        ConnectionDialog again;
        QCOMPARE(again.agentUrl(), QUrl(url));
        QVERIFY(again.token().isEmpty());
    }

    void refusedTokenShowsTheBanner()
    {
        auto window = openConsole("nobody-token");
        QLabel *banner = child<QLabel>(window.get(), "connectionBanner");
        QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), kAgentTimeoutMs);
        QVERIFY2(banner->text().contains(u"401") && banner->text().contains(u"refused the token"),
                 qPrintable(banner->text()));
        QCOMPARE(window->breakers()->breakers()->rowCount(), 0);
        QVERIFY(window->stream()->state() != StreamClient::State::Live);
        // The status bar says where it stands, whatever the banner says.
        QVERIFY(!child<QLabel>(window.get(), "connectionState")->text().isEmpty());
    }

private:
    std::unique_ptr<MainWindow> openConsole(const QByteArray &token)
    {
        return openTestedConsole(m_agent->port(), token);
    }

    /// A paid order whose notification the simulator sends `duplicates` extra times.
    void payWithDuplicates(const QString &orderNo, const QString &skuId, int duplicates)
    {
        if (duplicates > 0)
            QCOMPARE(m_agent->simDuplicateNotifications(QStringLiteral("wechat"), duplicates).status, 200);
        QString error;
        const QString paymentNo = m_agent->orderPaidAtSim(orderNo, 42, QStringLiteral("99.00"), skuId, &error);
        QVERIFY2(!paymentNo.isEmpty(), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(m_agent->notificationState(paymentNo) == u"acknowledged", kAgentTimeoutMs);
        if (duplicates > 0)
            QCOMPARE(m_agent->simDuplicateNotifications(QStringLiteral("wechat"), 0).status, 200);
    }

    static double plottedCaught(const MainWindow &window)
    {
        double sum = 0;
        for (Layer layer : allLayers) {
            if (layer != Layer::None)
                sum += window.dashboard()->chart()->plottedSum(layer);
        }
        return sum;
    }

    static QString breakerField(const BreakersModel &model, const char *field)
    {
        return model.rowObject(model.rowOf(QStringLiteral("gateway.wechat"))).value(QLatin1String(field)).toString();
    }

    QJsonObject agentBreaker(const QString &name) const
    {
        const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/api/v1/breakers"), {}, kView);
        for (const QJsonValue &row : QJsonDocument::fromJson(answer.body).array()) {
            if (row.toObject().value(QStringLiteral("name")).toString() == name)
                return row.toObject();
        }
        return {};
    }

    QJsonObject agentCompensation(qint64 id) const
    {
        const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/api/v1/compensations"), {}, kView);
        for (const QJsonValue &row : QJsonDocument::fromJson(answer.body).array()) {
            if (row.toObject().value(QStringLiteral("id")).toInteger() == id)
                return row.toObject();
        }
        return {};
    }

    qint64 propose(const QByteArray &token, const QString &orderNo, const QString &kind, const QString &reason) const
    {
        const QJsonObject body{
            {QStringLiteral("kind"), kind}, {QStringLiteral("order_no"), orderNo}, {QStringLiteral("reason"), reason}};
        const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/compensations"),
                                                QJsonDocument(body).toJson(QJsonDocument::Compact), bearer(token));
        if (answer.status != 201)
            qWarning().noquote() << "propose:" << answer.status << answer.body;
        return answer.json().value(QStringLiteral("id")).toInteger();
    }

    QJsonArray auditRows(const QString &action, const QString &target) const
    {
        const HttpAnswer answer = m_agent->call(
            "GET", QStringLiteral("/api/v1/audit?action=%1&target=%2").arg(action, target), {}, kView);
        return QJsonDocument::fromJson(answer.body).array();
    }

    AgentFixture m_agent;
};

int main(int argc, char *argv[])
{
    return runConsoleTest<TestConsole>(argc, argv, QStringLiteral("tst_console"));
}
#include "tst_console.moc"
