// kill -9 of the agent after a notification's log row is durable and before its
// business transaction: after a restart the worker finishes the `accepted` row — the
// order is PAID once, every effect once, nothing lost. One payonce-sim, run on its own,
// outlives the agent (as the real platform does) and keeps re-delivering meanwhile.

#include "agentconfig.h"
#include "agentfixture.h"
#include "simprocess.h"
#include "storagefixture.h"

#include <QJsonDocument>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

class TestCallbackCrash : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void killedAfterTheLogRowThenTheWorkerFinishes()
    {
        AgentFixture fixture; // the database; the agent is killed and restarted on it
        QVERIFY2(fixture.startDatabase(), fixture.error());
        QString error;
        auto sim = SimProcess::start(&error);
        QVERIFY2(sim, qPrintable(error));

        AgentProcess::Options options;
        options.sim = false;
        options.port = freeLoopbackPort(); // the notify URL must survive the restart
        options.extraConfig = QJsonObject{{QStringLiteral("wechat"), sim->weChatConfig()}, qaEnabled()};
        AgentProcess::Options paused = options;
        paused.environment = {QStringLiteral("PAYONCE_TEST_PAUSE_AT=after_log_row_durable")};
        // The point between the log row and the paid transaction exists on the
        // accepted-first way only (a one-commit delivery has none).
        paused.extraConfig.insert(QStringLiteral("callbacks"),
                                  QJsonObject{{QStringLiteral("commit"), QStringLiteral("accepted_first")}});
        auto agent = fixture.startAnother(paused);
        QVERIFY(agent);

        const QString orderNo = QStringLiteral("ORD-CRASH");
        QVERIFY2(agent->createOrder(orderNo, 21, QStringLiteral("12.34"), QStringLiteral("SKU-CRASH"), &error),
                 qPrintable(error));
        const QString token = agent->issueToken(21, orderNo);
        const HttpAnswer confirmed = agent->call(
            "POST", QStringLiteral("/api/v1/payments/confirm"),
            QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                      {QStringLiteral("order_no"), orderNo},
                                      {QStringLiteral("channel"), QStringLiteral("wechat")}})
                .toJson(QJsonDocument::Compact),
            {{"X-User-Id", "21"}, {"Idempotency-Key", "crash-1"}});
        QVERIFY2(confirmed.status == 200, confirmed.body.constData());
        const QString paymentNo = confirmed.json().value(QStringLiteral("payment_no")).toString();
        // Slow re-deliveries (the WeChat schedule × 0.01: 150 ms, 150 ms, 300 ms, 1.8 s, …).
        QCOMPARE(
            httpCall(sim->port(), "POST", QStringLiteral("/sim/notify-config"), "{\"time_scale\":0.01}", {}).status,
            200);
        QCOMPARE(httpCall(sim->port(), "POST", QStringLiteral("/sim/pay"),
                          QStringLiteral("{\"channel\":\"wechat\",\"out_trade_no\":\"%1\"}").arg(paymentNo).toUtf8(),
                          {})
                     .status,
                 200);

        auto count = [&](const char *sql) { return fixture.count(sql, {orderNo}); };
        // The delivery made its log row durable and is parked before the transaction.
        QTRY_COMPARE_WITH_TIMEOUT(
            count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'accepted'"), qint64(1),
            30000);
        // The row commits a moment before the hook's log line is written and read back.
        QTRY_VERIFY2_WITH_TIMEOUT(agent->output().contains(u"paused after the log row"), qPrintable(agent->output()),
                                  10000);
        agent->killHard();
        agent.reset();
        QCOMPARE(count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'"), qint64(0));
        QCOMPARE(count("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), qint64(0));

        // Restart without the hook: the worker (and any re-delivery, which meets the durable
        // row and answers SUCCESS at once) brings the order to PAID — once.
        auto restarted = fixture.startAnother(options);
        QVERIFY(restarted);
        QTRY_COMPARE_WITH_TIMEOUT(count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'"),
                                  qint64(1), 60000);
        QTRY_COMPARE_WITH_TIMEOUT(
            count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'processed'"), qint64(1),
            30000);
        QCOMPARE(count("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), qint64(1));
        QCOMPARE(count("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), qint64(1));
        QCOMPARE(count("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), qint64(1));
        QCOMPARE(count("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), qint64(1));
        QCOMPARE(restarted->stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TestCallbackCrash)
#include "tst_callbackcrash.moc"
