// The callback path end to end: the agent binary with payonce-sim beside it, on each
// dialect. The simulator pays a trade and delivers the platform's signed (and, for
// WeChat, encrypted) notification to the agent — several copies at once — and the order
// is paid exactly once, with each side effect once.

#include "agentfixture.h"
#include "storagefixture.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

class TestCallbackPath : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        // Notifications go out at once and retries follow quickly (the schedule × 0.001).
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void concurrentDuplicateNotificationsPayOnce_data()
    {
        QTest::addColumn<QString>("channel");
        QTest::newRow("wechat") << QStringLiteral("wechat");
        QTest::newRow("alipay") << QStringLiteral("alipay");
    }
    void concurrentDuplicateNotificationsPayOnce()
    {
        QFETCH(QString, channel);
        const QString orderNo = QStringLiteral("ORD-CB-") + channel;
        const QString paymentNo = confirmOrder(orderNo, channel);
        QVERIFY(!paymentNo.isEmpty());

        // Every delivery arrives as 5 simultaneous copies (a replaying proxy, two agents).
        QString error;
        QVERIFY2(m_agent->simPayWithCopies(channel, paymentNo, 5, 30000, &error), qPrintable(error));
        // One acknowledged copy ends the platform's retries; the other copies of that
        // delivery may still be inside the agent, so wait until all five are recorded.
        QTRY_VERIFY_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND verified = 1", {orderNo})
                >= 5,
            30000);

        QCOMPARE(paidRows(orderNo), qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM stock_log WHERE order_no = ?", {orderNo}), qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?", {orderNo}), qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM point_log WHERE order_no = ?", {orderNo}), qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ? AND event_type = 'order.paid'",
                               {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'processed'",
                               {orderNo}),
                 qint64(1));
        // Every copy was recorded, verified, with the layer that decided it: one first
        // processing (layer none, "processed"), the rest caught by a named layer. A copy
        // that met a temporary failure on a loaded machine (SQLite busy past its retries)
        // is also recorded without a layer, answered 500 and re-sent by the platform: it
        // must be that, never a second processing.
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND layer = 'none' "
                               "AND error_code = 'processed'",
                               {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND layer = 'none' "
                               "AND NOT (error_code = 'processed' OR http_status = 500)",
                               {orderNo}),
                 qint64(0));
        QCOMPARE(countRows(m_agent.database(), QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"),
                           {QVariant(QStringLiteral("SKU-CB-") + channel)}),
                 qint64(99));
    }

    // A forged notification: 401 FAIL, layer rejected, only its metadata recorded.
    void forgedWeChatNotificationIsRefused()
    {
        const qint64 deliveries = m_agent.count("SELECT COUNT(*) FROM callback_deliveries");
        const qint64 logRows = m_agent.count("SELECT COUNT(*) FROM pay_callback_log");
        const QByteArray body = "{\"id\":\"forged\",\"event_type\":\"TRANSACTION.SUCCESS\",\"resource\":{\"algorithm\":"
                                "\"AEAD_AES_256_GCM\",\"ciphertext\":\"AAAA\",\"associated_data\":\"transaction\","
                                "\"nonce\":\"123456789012\"}}";
        const HttpAnswer answer = m_agent->call(
            "POST", QStringLiteral("/api/v1/callbacks/wechat"), body,
            {{"Wechatpay-Signature", "Zm9yZ2Vk"},
             {"Wechatpay-Serial", "PAYONCE_SIM_0001"},
             {"Wechatpay-Nonce", "n"},
             {"Wechatpay-Timestamp", QByteArray::number(QDateTime::currentSecsSinceEpoch())}});
        QVERIFY2(answer.status == 401 && answer.json().value(QStringLiteral("code")).toString() == u"FAIL"
                     && answer.header("X-Payonce-Layer") == "rejected",
                 qPrintable(describe(answer)));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM callback_deliveries"), deliveries + 1);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE verified = 0 AND raw_body IS NULL"),
                 m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE verified = 0"));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM pay_callback_log"), logRows);
    }

    // The incident switch: in accept-only mode notifications are acknowledged with their
    // rows left `accepted`; back to normal, the worker drains them and the order is paid.
    void acceptOnlyThenNormalDrains()
    {
        const QString orderNo = QStringLiteral("ORD-CB-ACCEPT");
        const QString paymentNo = confirmOrder(orderNo, QStringLiteral("wechat"));
        QVERIFY(!paymentNo.isEmpty());
        const HttpAnswer on = m_agent.setCallbackMode(QStringLiteral("accept_only"),
                                                      QStringLiteral("database failover drill"));
        QVERIFY2(on.status == 200 && on.json().value(QStringLiteral("callbacks")).toString() == u"accept_only",
                 qPrintable(describe(on)));
        // The mode is shared through the database and each agent re-reads it at most once a
        // second (CallbackPipelineOptions::modeCacheMs): the documented propagation bound.
        QTest::qWait(1500);
        QCOMPARE(m_agent->simPay(QStringLiteral("wechat"), paymentNo).status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(m_agent->notificationState(paymentNo) == u"acknowledged", 30000);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'accepted'",
                               {orderNo}),
                 qint64(1));
        QCOMPARE(paidRows(orderNo), qint64(0));
        const HttpAnswer mode = m_agent->call("GET", QStringLiteral("/api/v1/mode"), {}, kView);
        QVERIFY2(mode.json().value(QStringLiteral("accepted_waiting")).toInteger() >= 1, qPrintable(describe(mode)));

        const HttpAnswer off = m_agent.setCallbackMode(QStringLiteral("normal"), QStringLiteral("failover done"));
        QVERIFY2(off.status == 200, qPrintable(describe(off)));
        QTRY_COMPARE_WITH_TIMEOUT(paidRows(orderNo), qint64(1), 30000);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?", {orderNo}), qint64(1));
        QCOMPARE(
            m_agent.count("SELECT COUNT(*) FROM audit_log WHERE action = 'mode.set' AND actor = 'desk' AND reason IN "
                          "('database failover drill', 'failover done')"),
            qint64(2));
    }

    // The agent that switched the mode applies it from the next delivery on, not after its
    // mode cache expires: a notification right after the 200 is only accepted.
    void acceptOnlyAppliesAtOnceOnTheAgentThatSetIt()
    {
        const QString warm = QStringLiteral("ORD-CB-WARM");
        const QString late = QStringLiteral("ORD-CB-AT-ONCE");
        const QString warmPayment = confirmOrder(warm, QStringLiteral("alipay"));
        const QString latePayment = confirmOrder(late, QStringLiteral("alipay"));
        QVERIFY(!warmPayment.isEmpty() && !latePayment.isEmpty());
        // A delivery in normal mode: the agent has just read the mode.
        QCOMPARE(m_agent->simPay(QStringLiteral("alipay"), warmPayment).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(paidRows(warm), qint64(1), 30000);
        const HttpAnswer on = m_agent.setCallbackMode(QStringLiteral("accept_only"), QStringLiteral("failover now"));
        QVERIFY2(on.status == 200, qPrintable(describe(on)));
        QCOMPARE(m_agent->simPay(QStringLiteral("alipay"), latePayment).status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(m_agent->notificationState(latePayment) == u"acknowledged", 30000);
        QCOMPARE(
            m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'accepted'", {late}),
            qint64(1));
        QCOMPARE(paidRows(late), qint64(0));
        const HttpAnswer off = m_agent.setCallbackMode(QStringLiteral("normal"), QStringLiteral("failover done"));
        QVERIFY2(off.status == 200, qPrintable(describe(off)));
        QTRY_COMPARE_WITH_TIMEOUT(paidRows(late), qint64(1), 30000);
    }

private:
    /// The order's rows that are PAID: 1 once it is paid (never more).
    qint64 paidRows(const QString &orderNo)
    {
        return m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo});
    }

    /// Creates an order of one unit of its own SKU for user 42 and confirms it on the
    /// channel: the payment_no (out_trade_no at the platform), or empty.
    QString confirmOrder(const QString &orderNo, const QString &channel)
    {
        QString error;
        // The storm's orders share their channel's SKU; every other order has one of its own.
        const QString sku = orderNo == QStringLiteral("ORD-CB-") + channel ? QStringLiteral("SKU-CB-") + channel
                                                                           : QStringLiteral("SKU-") + orderNo;
        const QString paymentNo = m_agent->confirmedOrder(orderNo, 42, QStringLiteral("99.00"), sku, channel, &error);
        if (paymentNo.isEmpty())
            qWarning("%s", qPrintable(error));
        return paymentNo;
    }

    AgentFixture m_agent;
};

QTEST_GUILESS_MAIN(TestCallbackPath)
#include "tst_callbackpath.moc"
