// Orders stuck in PAYING, end to end: the real agent and payonce-sim, on the
// database of the dialect under test. The agent tells the platform to notify a relay in
// this test instead of itself (public_base_url), which keeps each notification and answers
// FAIL, so the order stays PAYING although the simulator has it paid — the lost callback.
// The order is then made older than the patrol's threshold, and the patrol's run and the
// late callback (the relay's copy, byte for byte) reach the agent at the same moment.
// Exactly one of them pays the order; every effect is written once.

#include "agentfixture.h"
#include "httptestsupport.h"
#include "notificationrelay.h"
#include "storagefixture.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <latch>
#include <memory>
#include <thread>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr qint64 kUser = 77;
constexpr qint64 kStuckAfterMs = 60 * 1000;

} // namespace

class TestPatrolPath : public QObject {
    Q_OBJECT
private:
    NotificationRelay m_relay;
    AgentFixture m_agent;
    int m_serial = 0;

    /// A PENDING order confirmed on `channel`: PAYING, with its trade at the simulator.
    QString confirm(const QString &orderNo, const QString &channel, const QString &idempotencyKey)
    {
        const QString token = m_agent->issueToken(kUser, orderNo);
        const HttpAnswer confirmed = m_agent->call(
            "POST", QStringLiteral("/api/v1/payments/confirm"),
            QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                      {QStringLiteral("order_no"), orderNo},
                                      {QStringLiteral("channel"), channel}})
                .toJson(QJsonDocument::Compact),
            {{"X-User-Id", QByteArray::number(kUser)}, {"Idempotency-Key", idempotencyKey.toUtf8()}});
        if (confirmed.status != 200) {
            qWarning("confirm: %s", qPrintable(describe(confirmed)));
            return {};
        }
        return confirmed.json().value(QStringLiteral("payment_no")).toString();
    }

    QString newOrder(const QString &channel)
    {
        const QString orderNo = QStringLiteral("ORD-PP-%1-%2").arg(channel).arg(++m_serial);
        QString error;
        if (!m_agent->createOrder(orderNo, kUser, QStringLiteral("66.00"), QStringLiteral("SKU-") + orderNo, &error)) {
            qWarning("%s", qPrintable(error));
            return {};
        }
        return orderNo;
    }

    struct PaidAtSimulator {
        QString payNo;
        CapturedRequest notification; ///< the relay's copy
    };

    /// Paid at the simulator; its notification reached only the relay.
    std::optional<PaidAtSimulator> payAtSimulator(const QString &channel, const QString &paymentNo)
    {
        const qsizetype before = m_relay.captured.size();
        const HttpAnswer paid = m_agent->simPay(channel, paymentNo);
        if (paid.status != 200) {
            qWarning("sim pay: %s", qPrintable(describe(paid)));
            return std::nullopt;
        }
        QElapsedTimer waited;
        waited.start();
        while (m_relay.captured.size() == before && waited.elapsed() < 20000)
            QTest::qWait(20);
        if (m_relay.captured.size() == before)
            return std::nullopt;
        return PaidAtSimulator{paid.json().value(QStringLiteral("pay_no")).toString(), m_relay.captured.last()};
    }

    /// The order's last change, moved back past the patrol's threshold.
    bool makeStuck(const QString &orderNo)
    {
        return m_agent.exec(QStringLiteral("UPDATE orders SET updated_at = updated_at - ? WHERE order_no = ?"),
                            {kStuckAfterMs + 60000, orderNo});
    }

    HttpAnswer runPatrol(const QByteArray &reason = "stuck payments drill")
    {
        return httpCall(m_agent->port(), "POST", QStringLiteral("/api/v1/reconciliation/run"),
                        "{\"reason\":\"" + reason + "\"}", kDesk);
    }

    void verifyPaidOnce(const QString &orderNo, const QString &payNo)
    {
        QCOMPARE(m_agent.text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("PAID"));
        QCOMPARE(m_agent.text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {orderNo}), payNo);
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"),
                              {QString(QStringLiteral("SKU-") + orderNo)}),
                 QStringLiteral("99"));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.text(QStringLiteral("SELECT status FROM pay_callback_log WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("processed"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            {QStringLiteral("public_base_url"), m_relay.baseUrl()},
            {QStringLiteral("patrol"), QJsonObject{{QStringLiteral("interval_ms"), 0},
                                                   {QStringLiteral("stuck_paying_after_ms"), kStuckAfterMs}}}};
        // The platform's next try comes minutes later: the relay's copy is the late callback.
        options.simNotifyTimeScale = "20";
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void patrolAndLateCallbackAtTheSameMomentPayOnce_data()
    {
        QTest::addColumn<QString>("channel");
        QTest::newRow("wechat") << QStringLiteral("wechat");
        QTest::newRow("alipay") << QStringLiteral("alipay");
    }
    void patrolAndLateCallbackAtTheSameMomentPayOnce()
    {
        QFETCH(QString, channel);
        // The patrol first asks the simulator, so a callback sent at the very same instant
        // is ahead of it; from round to round the callback leaves a little later, moving the
        // meeting point through the patrol's settlement.
        const QList<int> callbackDelaysMs{0, 1, 2, 3, 4, 6, 8, 12};
        int byPatrol = 0, byCallback = 0;
        QStringList winners;
        for (const int delayMs : callbackDelaysMs) {
            const QString orderNo = newOrder(channel);
            QVERIFY(!orderNo.isEmpty());
            const QString paymentNo = confirm(orderNo, channel, orderNo);
            QVERIFY(!paymentNo.isEmpty());
            const auto late = payAtSimulator(channel, paymentNo);
            QVERIFY2(late, "the simulator's notification never reached the relay");
            const QString payNo = late->payNo;
            QVERIFY(!payNo.isEmpty());
            QCOMPARE(m_agent.text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo}),
                     QStringLiteral("PAYING"));
            QVERIFY(makeStuck(orderNo));

            HttpAnswer patrolAnswer;
            QByteArray callbackAnswer;
            std::latch start(2);
            std::thread patrolThread([&] {
                start.arrive_and_wait();
                patrolAnswer = runPatrol();
            });
            std::thread callbackThread([&, delayMs, request = replayOf(late->notification)] {
                start.arrive_and_wait();
                std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
                callbackAnswer = httpExchange(m_agent->port(), request, 30000);
            });
            patrolThread.join();
            callbackThread.join();

            QVERIFY2(patrolAnswer.status == 200, qPrintable(describe(patrolAnswer)));
            QCOMPARE(httpStatusOf(callbackAnswer), 200);
            verifyPaidOnce(orderNo, payNo);

            // Exactly one made PAYING → PAID: the patrol (its audit row) or the callback
            // (its delivery decided "processed").
            const qint64 patrolFinished = m_agent.count(
                QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'patrol.finish_paying' AND target = ?"),
                {QString(QStringLiteral("order:") + orderNo)});
            const qint64 callbackProcessed = m_agent.count(
                QStringLiteral(
                    "SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND error_code = 'processed'"),
                {orderNo});
            QCOMPARE(patrolFinished + callbackProcessed, qint64(1));
            byPatrol += int(patrolFinished);
            byCallback += int(callbackProcessed);
            winners.append(QStringLiteral("+%1 ms: %2").arg(delayMs).arg(patrolFinished ? u"patrol" : u"callback"));
        }
        qInfo("%s: %d round(s) finished by the patrol, %d by the late callback (%s)", qPrintable(channel), byPatrol,
              byCallback, qPrintable(winners.join(u", ")));
    }

    void aPatrolAloneFinishesAndTheFindingResolves()
    {
        const QString orderNo = newOrder(QStringLiteral("wechat"));
        const QString paymentNo = confirm(orderNo, QStringLiteral("wechat"), orderNo);
        QVERIFY(!paymentNo.isEmpty());
        const auto late = payAtSimulator(QStringLiteral("wechat"), paymentNo);
        QVERIFY(late);
        QVERIFY(makeStuck(orderNo));
        const HttpAnswer run = runPatrol();
        QVERIFY2(run.status == 200, qPrintable(describe(run)));
        QVERIFY2(run.body.contains(orderNo.toUtf8()), qPrintable(describe(run)));
        const QString payNo = m_agent.text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {orderNo});
        QVERIFY(!payNo.isEmpty());
        verifyPaidOnce(orderNo, payNo);
        QCOMPARE(
            m_agent.count(
                QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'patrol.finish_paying' AND target = ?"),
                {QString(QStringLiteral("order:") + orderNo)}),
            qint64(1));
        // The late callback afterwards: acknowledged, nothing written twice.
        QCOMPARE(httpStatusOf(httpExchange(m_agent->port(), replayOf(late->notification), 30000)), 200);
        verifyPaidOnce(orderNo, payNo);
        QVERIFY2(runPatrol().status == 200, "second run");
        QCOMPARE(m_agent.text(QStringLiteral("SELECT status FROM findings WHERE kind = 'stuck_paying' AND subject = ?"),
                              {QString(QStringLiteral("order:") + orderNo)}),
                 QStringLiteral("resolved"));
    }

    void anUnpaidStuckOrderIsClosedRevertedAndPayableAgain()
    {
        const QString orderNo = newOrder(QStringLiteral("wechat"));
        const QString paymentNo = confirm(orderNo, QStringLiteral("wechat"), orderNo);
        QVERIFY(!paymentNo.isEmpty());
        QVERIFY(makeStuck(orderNo));
        const HttpAnswer run = runPatrol();
        QVERIFY2(run.status == 200, qPrintable(describe(run)));
        QCOMPARE(m_agent.text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("PENDING"));
        const HttpAnswer trade = m_agent->simCall("GET", QStringLiteral("/sim/trades/") + paymentNo);
        QVERIFY2(trade.body.contains("CLOSED"), qPrintable(describe(trade)));
        QCOMPARE(
            m_agent.count(
                QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'patrol.revert_paying' AND target = ?"),
                {QString(QStringLiteral("order:") + orderNo)}),
            qint64(1));

        // The user pays again: a new confirm creates a new trade under a new payment_no.
        const QString again = confirm(orderNo, QStringLiteral("wechat"), orderNo + QStringLiteral("-again"));
        QVERIFY(!again.isEmpty());
        QVERIFY(again != paymentNo);
        const auto late = payAtSimulator(QStringLiteral("wechat"), again);
        QVERIFY(late);
        QCOMPARE(httpStatusOf(httpExchange(m_agent->port(), replayOf(late->notification), 30000)), 200);
        const QString payNo = m_agent.text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {orderNo});
        QVERIFY(!payNo.isEmpty());
        verifyPaidOnce(orderNo, payNo);
    }

    void onlyAnOperatorRunsThePatrol()
    {
        const qint64 before = m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings"));
        const HttpAnswer viewer = httpCall(m_agent->port(), "POST", QStringLiteral("/api/v1/reconciliation/run"),
                                           "{\"reason\":\"x\"}", kView);
        QCOMPARE(viewer.status, 403);
        const HttpAnswer nobody = httpCall(m_agent->port(), "POST", QStringLiteral("/api/v1/reconciliation/run"),
                                           "{\"reason\":\"x\"}", {});
        QCOMPARE(nobody.status, 401);
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings")), before);
    }
};

QTEST_GUILESS_MAIN(TestPatrolPath)
#include "tst_patrolpath.moc"
