// payonce-console's operations views against a real payonce-agent (SQLite, payonce-sim
// beside it, its outbox delivering to a webhook receiver of this test with one attempt
// only), driven through their widgets on the offscreen platform: a stuck idempotency key
// is unlocked from the inspector (the agent then has no record of it) while a fresh
// in_flight one shows the agent's refusal and a completed one cannot be unlocked; a dead
// outbox event re-driven from the UI is delivered and stays in view marked re-driven;
// accept-only switched on from the UI leaves paid callbacks waiting (shown), and off
// shows the drain reaching zero; the locks view shows the fencing token a payment was
// written with. Every model and proxy of every window runs under QAbstractItemModelTester.

#include "agentconfig.h"
#include "agentfixture.h"
#include "consoletestsupport.h"
#include "storagefixture.h"
#include "webhookreceiver.h"

#include "console/app/mainwindow.h"
#include "console/models/auditmodel.h"
#include "console/models/idempotencyrecordmodel.h"
#include "console/models/locksmodel.h"
#include "console/models/outboxmodel.h"
#include "console/views/auditview.h"
#include "console/views/incidentview.h"
#include "console/views/keysview.h"
#include "console/views/locksview.h"
#include "console/views/outboxview.h"
#include "console/views/tablepanel.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace payonce;
using namespace payonce::console;
using namespace payonce::testsupport;

namespace {

constexpr int kAgentTimeoutMs = 30000;
constexpr qint64 kUser = 42;

} // namespace

class TestConsoleOps : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_receiver = std::make_unique<WebhookReceiver>(200);
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            streamEvery(100),
            // One attempt: a failed delivery is dead at once.
            {QStringLiteral("outbox"),
             QJsonObject{{QStringLiteral("webhook_urls"),
                          QJsonArray{m_receiver->url(QStringLiteral("/hooks/paid")).toString()}},
                         {QStringLiteral("max_attempts"), 1}}},
            // No patrol or closer: every write is this test's doing or the callback path's.
            noPatrolTimer(),
            noOrderCloser(),
        };
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(Dialect::Sqlite, options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void stuckKeyIsUnlockedFromTheInspector()
    {
        const QString paidOrder = QStringLiteral("ORD-OPS-KEY");
        pay(paidOrder, QStringLiteral("SKU-OPS-KEY"));
        // Two in_flight records as a request that died holding them leaves them: one locked
        // ten minutes ago (past any lock timeout), one locked just now.
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const QString insert = QStringLiteral(
            "INSERT INTO idempotency_keys (user_id, idem_key, fingerprint, status, locked_at, "
            "created_at) VALUES (?, ?, 'f00d', 'in_flight', ?, ?)");
        QVERIFY(execSql(m_agent.database(), insert, {kUser, QStringLiteral("stuck-ui-1"), now - 600000, now - 600000})
                    .ok());
        QVERIFY(execSql(m_agent.database(), insert, {kUser, QStringLiteral("fresh-ui-1"), now, now}).ok());

        auto desk = openConsole(kDeskToken);
        child<QAction>(desk.get(), "showView7")->trigger();
        QCOMPARE(desk->views()->currentWidget(), desk->keys());
        IdempotencyRecordModel *record = desk->keys()->record();
        auto *unlockButton = child<QPushButton>(desk.get(), "unlockButton");
        QLabel *explanation = child<QLabel>(desk.get(), "unlockExplanation");
        QLabel *result = child<QLabel>(desk.get(), "keyResult");

        // A completed record: its stored response shown, Unlock refused with the reason.
        lookUp(*desk, QString::number(kUser), paidOrder);
        QTRY_COMPARE_WITH_TIMEOUT(cell(*record, "status"), QStringLiteral("completed"), kAgentTimeoutMs);
        QCOMPARE(cell(*record, "fingerprint").size(), 64);
        QVERIFY2(cell(*record, "response").contains(paidOrder), qPrintable(cell(*record, "response")));
        QVERIFY(!unlockButton->isEnabled());
        QVERIFY2(explanation->text().contains(u"completed"), qPrintable(explanation->text()));

        // In flight but locked just now: offered, and the agent's refusal is shown.
        lookUp(*desk, QString::number(kUser), QStringLiteral("fresh-ui-1"));
        QTRY_COMPARE_WITH_TIMEOUT(cell(*record, "key"), QStringLiteral("fresh-ui-1"), kAgentTimeoutMs);
        QCOMPARE(cell(*record, "status"), QStringLiteral("in_flight"));
        QTRY_VERIFY(unlockButton->isEnabled());
        QTest::mouseClick(unlockButton, Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(desk.get()));
        QVERIFY(answerReasonDialog(desk.get(), QStringLiteral("too early")));
        QTRY_VERIFY_WITH_TIMEOUT(explanation->text().contains(u"The agent refused"), kAgentTimeoutMs);
        QVERIFY2(explanation->text().contains(u"lock timeout"), qPrintable(explanation->text()));
        QCOMPARE(agentKey(QStringLiteral("fresh-ui-1")).status, 200);

        // Stuck past its timeout: unlocked with a reason, and the agent has no record left.
        lookUp(*desk, QString::number(kUser), QStringLiteral("stuck-ui-1"));
        QTRY_COMPARE_WITH_TIMEOUT(cell(*record, "key"), QStringLiteral("stuck-ui-1"), kAgentTimeoutMs);
        QVERIFY(!cell(*record, "locked_at").isEmpty());
        QTRY_VERIFY(unlockButton->isEnabled());
        QTest::mouseClick(unlockButton, Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(desk.get()));
        QVERIFY(answerReasonDialog(desk.get(), QStringLiteral("agent died mid-request, INC-11")));
        QTRY_VERIFY_WITH_TIMEOUT(result->text().contains(u"the agent has no record of it now"), kAgentTimeoutMs);
        QCOMPARE(record->rowCount(), 0);
        QCOMPARE(agentKey(QStringLiteral("stuck-ui-1")).status, 404);
        const QJsonArray audit = auditRows(QStringLiteral("idempotency.unlock"));
        QCOMPARE(audit.size(), 1);
        QCOMPARE(audit.first().toObject().value(QStringLiteral("actor")).toString(), QStringLiteral("desk"));
        QCOMPARE(audit.first().toObject().value(QStringLiteral("reason")).toString(),
                 QStringLiteral("agent died mid-request, INC-11"));
    }

    void deadEventIsRedrivenFromTheUiAndDelivered()
    {
        const QString orderNo = QStringLiteral("ORD-OPS-DEAD");
        const QString eventId = QStringLiteral("order.paid:") + orderNo;
        m_receiver->setStatus(500);
        pay(orderNo, QStringLiteral("SKU-OPS-DEAD"));
        QTRY_VERIFY_WITH_TIMEOUT(!agentEvent(QStringLiteral("dead"), eventId).isEmpty(), kAgentTimeoutMs);
        const qint64 id = agentEvent(QStringLiteral("dead"), eventId).value(QStringLiteral("id")).toInteger();

        auto desk = openConsole(kDeskToken);
        child<QAction>(desk.get(), "showView9")->trigger();
        QCOMPARE(desk->views()->currentWidget(), desk->outbox());
        OutboxModel *events = desk->outbox()->events();
        QTRY_VERIFY_WITH_TIMEOUT(events->rowOfId(id) >= 0, kAgentTimeoutMs);
        QCOMPARE(eventCell(*events, id, "status"), QStringLiteral("dead"));
        QVERIFY2(eventCell(*events, id, "last_error").contains(u"500"),
                 qPrintable(eventCell(*events, id, "last_error")));
        QCOMPARE(eventCell(*events, id, "redriven"), QStringLiteral("no"));
        auto *redriveButton = child<QPushButton>(desk.get(), "redriveButton");
        QVERIFY(!redriveButton->isEnabled()); // nothing selected yet

        m_receiver->setStatus(200);
        QVERIFY(selectSourceRow(desk->outbox()->panel(), events->rowOfId(id)));
        QTRY_VERIFY(redriveButton->isEnabled());
        QTest::mouseClick(redriveButton, Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(desk.get()));
        QVERIFY(answerReasonDialog(desk.get(), QStringLiteral("receiver fixed, INC-12")));
        QTRY_VERIFY_WITH_TIMEOUT(child<QLabel>(desk.get(), "redriveResult")->text().contains(u"re-driven"),
                                 kAgentTimeoutMs);

        // Delivered by the agent's dispatcher, and still in view, marked.
        QTRY_VERIFY_WITH_TIMEOUT(!agentEvent(QStringLiteral("delivered"), eventId).isEmpty(), kAgentTimeoutMs);
        QCOMPARE(agentEvent(QStringLiteral("delivered"), eventId).value(QStringLiteral("redriven")).toBool(), true);
        QCOMPARE(m_receiver->requestsWithKey(eventId.toUtf8()).size(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(eventCell(*events, id, "status"), QStringLiteral("delivered"), kAgentTimeoutMs);
        QCOMPARE(eventCell(*events, id, "redriven"), QStringLiteral("yes"));
        QVERIFY(events->index(events->rowOfId(id), 0).data(Qt::BackgroundRole).isValid());
        const HttpAnswer audit = m_agent->call(
            "GET", QStringLiteral("/api/v1/audit?action=outbox.redrive&target=outbox:%1").arg(id), {}, kView);
        const QJsonArray lines = QJsonDocument::fromJson(audit.body).array();
        QCOMPARE(lines.size(), 1);
        QCOMPARE(lines.first().toObject().value(QStringLiteral("reason")).toString(),
                 QStringLiteral("receiver fixed, INC-12"));
    }

    void acceptOnlyOnThenOffDrainsToZero()
    {
        auto desk = openConsole(kDeskToken);
        auto viewer = openConsole(kViewToken);
        QTRY_COMPARE_WITH_TIMEOUT(viewer->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        child<QAction>(desk.get(), "showView10")->trigger();
        QCOMPARE(desk->views()->currentWidget(), desk->incident());
        QLabel *mode = child<QLabel>(desk.get(), "callbackModeValue");
        QLabel *waiting = child<QLabel>(desk.get(), "acceptedWaitingValue");
        auto *drain = child<QProgressBar>(desk.get(), "drainProgress");
        QTRY_COMPARE_WITH_TIMEOUT(mode->text(), QStringLiteral("normal"), kAgentTimeoutMs);
        QCOMPARE(waiting->text(), QStringLiteral("0"));

        auto *on = child<QPushButton>(desk.get(), "acceptOnlyOnButton");
        QVERIFY(on->isEnabled());
        QTest::mouseClick(on, Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(desk.get()));
        QVERIFY(answerReasonDialog(desk.get(), QStringLiteral("points database failing over, INC-13")));
        QTRY_COMPARE_WITH_TIMEOUT(agentMode().value(QStringLiteral("callbacks")).toString(),
                                  QStringLiteral("accept_only"), kAgentTimeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(mode->text(), QStringLiteral("ACCEPT-ONLY"), kAgentTimeoutMs);
        // The other console learns it from the stream.
        QTRY_VERIFY_WITH_TIMEOUT(
            child<QLabel>(viewer.get(), "modeResult")->text().contains(u"desk set callbacks to accept_only"),
            kAgentTimeoutMs);

        // Paid callbacks: acknowledged to the gateway, recorded, left waiting. An agent
        // reuses its read of the shared mode for up to a second, so a first callback may
        // still be processed: pay until one waits (bounded).
        QStringList orders;
        for (int i = 0; i < 10; ++i) {
            orders.append(QStringLiteral("ORD-OPS-ACC-%1").arg(i));
            pay(orders.last(), QStringLiteral("SKU-OPS-ACC-%1").arg(i));
            if (QTest::qWaitFor([&] { return waiting->text().toLongLong() >= 2; }, 2000))
                break;
        }
        QTRY_VERIFY_WITH_TIMEOUT(waiting->text().toLongLong() >= 2, kAgentTimeoutMs);
        const qint64 waitingShown = waiting->text().toLongLong();
        QCOMPARE(agentMode().value(QStringLiteral("accepted_waiting")).toInteger(), waitingShown);
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'accepted'")),
                 waitingShown);

        auto *off = child<QPushButton>(desk.get(), "acceptOnlyOffButton");
        QVERIFY(off->isEnabled());
        QTest::mouseClick(off, Qt::LeftButton);
        QTRY_VERIFY(reasonDialogShown(desk.get()));
        QVERIFY(answerReasonDialog(desk.get(), QStringLiteral("points database back, INC-13")));
        QTRY_COMPARE_WITH_TIMEOUT(mode->text(), QStringLiteral("normal"), kAgentTimeoutMs);
        // The drain, polled while it runs, reaches zero.
        QTRY_COMPARE_WITH_TIMEOUT(waiting->text(), QStringLiteral("0"), kAgentTimeoutMs);
        QCOMPARE(drain->value(), 100);
        QVERIFY2(drain->text().contains(QStringLiteral("%1 of %1 processed").arg(desk->incident()->progress().peak())),
                 qPrintable(drain->text()));
        QVERIFY(desk->incident()->progress().peak() >= waitingShown);
        QCOMPARE(agentMode().value(QStringLiteral("accepted_waiting")).toInteger(), qint64(0));
        for (const QString &orderNo : orders)
            QTRY_COMPARE_WITH_TIMEOUT(countRows(m_agent.database(),
                                                QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? "
                                                               "AND status = 'PAID'"),
                                                {orderNo}),
                                      qint64(1), kAgentTimeoutMs);
    }

    void locksViewShowsTheFencingTokenOfAPayment()
    {
        const QString orderNo = QStringLiteral("ORD-OPS-LOCK");
        pay(orderNo, QStringLiteral("SKU-OPS-LOCK"));
        auto viewer = openConsole(kViewToken);
        child<QAction>(viewer.get(), "showView8")->trigger();
        QCOMPARE(viewer->views()->currentWidget(), viewer->locks());
        FencingTokensModel *fences = viewer->locks()->fences();
        const auto tokenOf = [&] {
            for (int row = 0; row < fences->rowCount(); ++row) {
                if (fences->rowObject(row).value(QStringLiteral("order_no")).toString() == orderNo)
                    return fences->index(row, fences->columnOf(QStringLiteral("token"))).data().toString();
            }
            return QString();
        };
        QTRY_VERIFY_WITH_TIMEOUT(!tokenOf().isEmpty(), kAgentTimeoutMs);
        QVERIFY2(tokenOf().toULongLong() > 0, qPrintable(tokenOf()));
        // The same token as the agent reports; the refusals count is the agent's number.
        const QJsonObject locks = m_agent->call("GET", QStringLiteral("/api/v1/locks"), {}, kView).json();
        QString agentToken;
        for (const QJsonValue &fence : locks.value(QStringLiteral("fencing_tokens")).toArray()) {
            if (fence.toObject().value(QStringLiteral("order_no")).toString() == orderNo)
                agentToken = fence.toObject().value(QStringLiteral("token")).toString();
        }
        QCOMPARE(tokenOf(), agentToken);
        QTRY_COMPARE_WITH_TIMEOUT(child<QLabel>(viewer.get(), "staleRefusedCount")->text(),
                                  QString::number(locks.value(QStringLiteral("stale_fence_refused")).toInteger()),
                                  kAgentTimeoutMs);
        // The key store is named with its fence epoch: the token above is of that epoch.
        const QString epoch =
            locks.value(QStringLiteral("key_store")).toObject().value(QStringLiteral("fence_epoch")).toString();
        QCOMPARE(epoch.toULongLong(), tokenOf().toULongLong() >> 32);
        const QString line = QStringLiteral("Key store: embedded (this agent only), fence epoch %1").arg(epoch);
        QTRY_COMPARE_WITH_TIMEOUT(child<QLabel>(viewer->locks(), "keyStoreTopology")->text(), line, kAgentTimeoutMs);
        // The key inspector, on demand: the embedded store scanned, nothing stuck.
        QTest::mouseClick(child<QPushButton>(viewer->locks(), "scanStoredLocks"), Qt::LeftButton);
        auto *summary = child<QLabel>(viewer->locks(), "storedLocksSummary");
        QTRY_VERIFY_WITH_TIMEOUT(summary->text().startsWith(u"1 node(s) scanned"), kAgentTimeoutMs);
        QCOMPARE(
            summary->text(),
            QStringLiteral("1 node(s) scanned, %1 lock(s), 0 stuck").arg(viewer->locks()->storedLocks()->rowCount()));
        // The Keys view names it too, fetched when it is shown.
        viewer->views()->setCurrentWidget(viewer->keys());
        QTRY_COMPARE_WITH_TIMEOUT(child<QLabel>(viewer->keys(), "keyStoreTopology")->text(), line, kAgentTimeoutMs);
    }

    /// The actions taken from the UI above, each in the audit view with its actor and reason
    /// (runs after them: Qt Test keeps the declaration order).
    void auditViewListsTheseActionsWithTheirActors()
    {
        auto viewer = openConsole(kViewToken);
        child<QAction>(viewer.get(), "showView6")->trigger();
        QCOMPARE(viewer->views()->currentWidget(), viewer->audit());
        const AuditModel *audit = viewer->audit()->audit();
        const QAbstractItemModel *shown = child<QTableView>(viewer.get(), "auditTable")->model();
        const auto hasLine = [&](QStringView action, QStringView actor, QStringView reason) {
            for (int row = 0; row < shown->rowCount(); ++row) {
                const auto cell = [&](const char *column) {
                    return shown->index(row, audit->columnOf(QString::fromLatin1(column))).data().toString();
                };
                if (cell("action") == action && cell("actor") == actor && cell("reason") == reason)
                    return true;
            }
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(hasLine(u"idempotency.unlock", u"desk", u"agent died mid-request, INC-11"),
                                 kAgentTimeoutMs);
        QVERIFY(hasLine(u"outbox.redrive", u"desk", u"receiver fixed, INC-12"));
        QVERIFY(hasLine(u"mode.set", u"desk", u"points database failing over, INC-13"));
    }

private:
    std::unique_ptr<MainWindow> openConsole(const QByteArray &token)
    {
        return openTestedConsole(m_agent->port(), token);
    }

    static void lookUp(MainWindow &window, const QString &userId, const QString &key)
    {
        auto *user = child<QLineEdit>(&window, "keyUserId");
        auto *name = child<QLineEdit>(&window, "keyName");
        user->clear();
        name->clear();
        QTest::keyClicks(user, userId);
        QTest::keyClicks(name, key);
        QTest::mouseClick(child<QPushButton>(&window, "keyLookup"), Qt::LeftButton);
    }

    static QString cell(const JsonTableModel &model, const char *key)
    {
        if (model.rowCount() == 0)
            return {};
        return model.index(0, model.columnOf(QLatin1String(key))).data().toString();
    }

    static QString eventCell(const OutboxModel &model, qint64 id, const char *key)
    {
        const int row = model.rowOfId(id);
        return row < 0 ? QString() : model.index(row, model.columnOf(QLatin1String(key))).data().toString();
    }

    /// A paid order through payonce-sim, its notification acknowledged.
    void pay(const QString &orderNo, const QString &skuId)
    {
        QString error;
        const QString paymentNo = m_agent->orderPaidAtSim(orderNo, kUser, QStringLiteral("19.00"), skuId, &error);
        QVERIFY2(!paymentNo.isEmpty(), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(m_agent->notificationState(paymentNo) == u"acknowledged", kAgentTimeoutMs);
    }

    HttpAnswer agentKey(const QString &key) const
    {
        return m_agent->call("GET", QStringLiteral("/api/v1/idempotency-keys?user_id=%1&key=%2").arg(kUser).arg(key),
                             {}, kView);
    }

    QJsonObject agentEvent(const QString &status, const QString &eventId) const
    {
        const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/api/v1/outbox?status=%1&limit=500").arg(status),
                                                {}, kView);
        for (const QJsonValue &event : QJsonDocument::fromJson(answer.body).array()) {
            if (event.toObject().value(QStringLiteral("event_id")).toString() == eventId)
                return event.toObject();
        }
        return {};
    }

    QJsonObject agentMode() const { return m_agent->call("GET", QStringLiteral("/api/v1/mode"), {}, kView).json(); }

    QJsonArray auditRows(const QString &action) const
    {
        const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/api/v1/audit?action=%1").arg(action), {},
                                                kView);
        return QJsonDocument::fromJson(answer.body).array();
    }

    std::unique_ptr<WebhookReceiver> m_receiver;
    AgentFixture m_agent;
};

int main(int argc, char *argv[])
{
    return runConsoleTest<TestConsoleOps>(argc, argv, QStringLiteral("tst_consoleops"));
}
#include "tst_consoleops.moc"
