// Order close end to end: the real agent (its closer on a 200 ms timer and its
// POST /api/v1/orders/close-expired) and payonce-sim, on the database of the dialect under
// test. The agent tells the platform to notify a relay in this test (public_base_url),
// which keeps each notification and answers FAIL — so a payment's notification can be
// delivered late, by the test, byte for byte.
//
// Which states are real here: a PENDING order whose trade exists at the platform arises
// when the confirm's create reached the platform but the agent saw a timeout (the record
// is `failed`, the order back to PENDING); the test makes that state by SQL after a real
// confirm, because the simulator does not time out on demand. A CLOSED order whose trade
// was paid is the lost race (paid at the platform, the order closed by a path that never
// saw the trade); the test makes it by hiding the record from the closer (status
// `closed`) before the order expires — said again where it happens.

#include "agentconfig.h"
#include "agentfixture.h"
#include "httptestsupport.h"
#include "notificationrelay.h"
#include "storagefixture.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr qint64 kUser = 78;
constexpr qint64 kTimeoutMs = 60 * 1000;

} // namespace

class TestClosePath : public QObject {
    Q_OBJECT
private:
    NotificationRelay m_relay;
    AgentFixture m_agent;
    int m_serial = 0;

    QString statusOf(const QString &orderNo)
    {
        return firstValueText(m_agent.database(), QStringLiteral("SELECT status FROM orders WHERE order_no = ?"),
                              {orderNo});
    }

    /// In one transaction, so the closer's timer never sees half of it: the order's payment
    /// record becomes `recordStatus`, then the order PENDING and older than the timeout.
    bool expire(const QString &orderNo, const QString &recordStatus)
    {
        auto done = m_agent.database().write([&](sql::Session &session) -> core::Result<void> {
            if (!recordStatus.isEmpty()) {
                auto record = session.exec(QStringLiteral("UPDATE payment_records SET status = ? WHERE order_no = ?"),
                                           {recordStatus, orderNo});
                if (!record)
                    return record.error();
            }
            auto order = session.exec(
                QStringLiteral("UPDATE orders SET status = 'PENDING', updated_at = updated_at - ? "
                               "WHERE order_no = ?"),
                {kTimeoutMs + 60000, orderNo});
            if (!order)
                return order.error();
            return {};
        });
        if (!done.ok())
            qWarning() << "expire failed:" << done.error().internalMessage;
        return done.ok();
    }

    QString newOrder()
    {
        const QString orderNo = QStringLiteral("ORD-CP-%1").arg(++m_serial);
        QString error;
        if (!m_agent->createOrder(orderNo, kUser, QStringLiteral("45.00"), QStringLiteral("SKU-") + orderNo, &error)) {
            qWarning("%s", qPrintable(error));
            return {};
        }
        return orderNo;
    }

    /// Confirmed on wechat: PAYING, its trade NOTPAY at the simulator.
    QString confirm(const QString &orderNo)
    {
        const HttpAnswer confirmed = m_agent->call(
            "POST", QStringLiteral("/api/v1/payments/confirm"),
            QJsonDocument(QJsonObject{{QStringLiteral("token"), m_agent->issueToken(kUser, orderNo)},
                                      {QStringLiteral("order_no"), orderNo},
                                      {QStringLiteral("channel"), QStringLiteral("wechat")}})
                .toJson(QJsonDocument::Compact),
            {{"X-User-Id", QByteArray::number(kUser)}, {"Idempotency-Key", orderNo.toUtf8()}});
        if (confirmed.status != 200)
            qWarning("confirm: %s", qPrintable(describe(confirmed)));
        return confirmed.json().value(QStringLiteral("payment_no")).toString();
    }

    HttpAnswer payAtSimulator(const QString &paymentNo) { return m_agent->simPay(QStringLiteral("wechat"), paymentNo); }

    /// Paid at the simulator, its notification kept by the relay (its last capture): the pay_no.
    QString payWhileTheRelayHoldsTheNotification(const QString &paymentNo)
    {
        const qsizetype captured = m_relay.captured.size();
        const HttpAnswer paid = payAtSimulator(paymentNo);
        if (paid.status != 200) {
            qWarning("sim pay: %s", qPrintable(describe(paid)));
            return {};
        }
        for (int waited = 0; m_relay.captured.size() == captured && waited < 1000; ++waited)
            QTest::qWait(20);
        if (m_relay.captured.size() == captured)
            return {};
        return paid.json().value(QStringLiteral("pay_no")).toString();
    }

    QByteArray simTradeState(const QString &paymentNo)
    {
        return m_agent->simCall("GET", QStringLiteral("/sim/trades/") + paymentNo).body;
    }

    qint64 closeAudits(const QString &orderNo)
    {
        return m_agent.count(
            QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'order.close' AND actor = 'system:closer' "
                           "AND target = ?"),
            {QString(QStringLiteral("order:") + orderNo)});
    }

private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            {QStringLiteral("public_base_url"), m_relay.baseUrl()},
            noPatrolTimer(),
            {QStringLiteral("close"),
             QJsonObject{{QStringLiteral("pending_timeout_ms"), kTimeoutMs}, {QStringLiteral("interval_ms"), 200}}}};
        // The platform's next try comes minutes later: the relay's copy is the late notification.
        options.simNotifyTimeScale = "20";
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void anUnconfirmedExpiredOrderIsClosedByTheTimer()
    {
        const QString expired = newOrder();
        const QString young = newOrder();
        QVERIFY(!expired.isEmpty() && !young.isEmpty());
        QVERIFY(expire(expired, QString()));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(expired), QStringLiteral("CLOSED"), 20000);
        QCOMPARE(closeAudits(expired), qint64(1));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND closed_at IS NOT NULL"),
                          {expired}),
            qint64(1));
        const HttpAnswer order = m_agent->call("GET", QStringLiteral("/api/v1/orders/") + expired, {}, kDesk);
        QCOMPARE(order.json().value(QStringLiteral("status")).toString(), QStringLiteral("CLOSED"));
        // Not past the timeout: untouched by the same runs.
        QCOMPARE(statusOf(young), QStringLiteral("PENDING"));
        QCOMPARE(closeAudits(young), qint64(0));
    }

    void aTradeAtThePlatformIsClosedThereFirstAndCannotBePaidAfterwards()
    {
        const QString orderNo = newOrder();
        const QString paymentNo = confirm(orderNo);
        QVERIFY(!paymentNo.isEmpty());
        QVERIFY2(simTradeState(paymentNo).contains("NOTPAY"), simTradeState(paymentNo).constData());
        // The state a confirm leaves when its create reached the platform but timed out here.
        QVERIFY(expire(orderNo, QStringLiteral("failed")));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(orderNo), QStringLiteral("CLOSED"), 20000);
        QVERIFY2(simTradeState(paymentNo).contains("CLOSED"), simTradeState(paymentNo).constData());
        QCOMPARE(m_agent.count(
                     QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ? AND status = 'closed'"),
                     {orderNo}),
                 qint64(1));
        QCOMPARE(closeAudits(orderNo), qint64(1));
        // The user's QR code is dead: the platform refuses the payment.
        QCOMPARE(payAtSimulator(paymentNo).status, 409);
        QCOMPARE(statusOf(orderNo), QStringLiteral("CLOSED"));
    }

    void aTradePaidBeforeTheCloseIsSettledOnce()
    {
        const QString orderNo = newOrder();
        const QString paymentNo = confirm(orderNo);
        QVERIFY(!paymentNo.isEmpty());
        const QString payNo = payWhileTheRelayHoldsTheNotification(paymentNo);
        QVERIFY(!payNo.isEmpty());
        // Paid at the platform, the notification lost, the order back to PENDING (the
        // confirm's timeout state above): the closer's close meets a paid trade.
        QVERIFY(expire(orderNo, QStringLiteral("failed")));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(orderNo), QStringLiteral("PAID"), 20000);
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND pay_no = ?"),
                               {orderNo, payNo}),
                 qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(closeAudits(orderNo), qint64(0));
        // The late notification: acknowledged, nothing twice.
        QCOMPARE(httpStatusOf(httpExchange(m_agent->port(), replayOf(m_relay.captured.last()), 30000)), 200);
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count(
                     QStringLiteral("SELECT COUNT(*) FROM findings WHERE order_no = ? AND kind = 'double_payment'"),
                     {orderNo}),
                 qint64(0));
    }

    void aLateNotificationForAClosedOrderIsRefundedNotShipped()
    {
        const QString orderNo = newOrder();
        const QString paymentNo = confirm(orderNo);
        QVERIFY(!paymentNo.isEmpty());
        const QString payNo = payWhileTheRelayHoldsTheNotification(paymentNo);
        QVERIFY(!payNo.isEmpty());
        const CapturedRequest late = m_relay.captured.last();
        // The lost race, simulated: the order is closed by a path that did not see the paid
        // trade (its record out of the closer's sight), then the notification arrives.
        QVERIFY(expire(orderNo, QStringLiteral("closed")));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(orderNo), QStringLiteral("CLOSED"), 20000);
        QCOMPARE(closeAudits(orderNo), qint64(1));

        QCOMPARE(httpStatusOf(httpExchange(m_agent->port(), replayOf(late), 30000)), 200);
        QCOMPARE(statusOf(orderNo), QStringLiteral("CLOSED"));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                          {QString(QStringLiteral("wechat:") + payNo)}),
            qint64(1));
        const HttpAnswer run = httpCall(m_agent->port(), "POST", QStringLiteral("/api/v1/reconciliation/run"),
                                        "{\"reason\":\"close drill\"}", kDesk);
        QVERIFY2(run.status == 200, qPrintable(describe(run)));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE kind = 'refund' AND order_no = ? "
                                         "AND pay_no = ? AND amount_fen = 4500 AND status = 'proposed'"),
                          {orderNo, payNo}),
            qint64(1));
        // Nothing shipped: no order.paid event, no stock taken.
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {orderNo}),
                 qint64(0));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {orderNo}),
                 qint64(0));
    }

    void anOperatorRunsTheCloserOnDemand()
    {
        const QString orderNo = newOrder();
        QVERIFY(!orderNo.isEmpty());
        const HttpAnswer viewer = httpCall(m_agent->port(), "POST", QStringLiteral("/api/v1/orders/close-expired"),
                                           "{\"reason\":\"x\"}", kView);
        QCOMPARE(viewer.status, 403);
        const HttpAnswer noReason = httpCall(m_agent->port(), "POST", QStringLiteral("/api/v1/orders/close-expired"),
                                             "{}", kDesk);
        QCOMPARE(noReason.status, 400);
        // The timer may be running at this instant: 409 close_running then, and a later ask
        // runs. (Not QTRY_*: it evaluates its expression again after success.)
        HttpAnswer run;
        for (int attempt = 0; attempt < 200; ++attempt) {
            run = httpCall(m_agent->port(), "POST", QStringLiteral("/api/v1/orders/close-expired"),
                           "{\"reason\":\"desk run\"}", kDesk);
            if (run.status != 409)
                break;
            QCOMPARE(run.json().value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString(),
                     QStringLiteral("close_running"));
            QTest::qWait(50);
        }
        QVERIFY2(run.status == 200, qPrintable(describe(run)));
        const QJsonObject answer = run.json();
        QCOMPARE(answer.value(QStringLiteral("pending_timeout_ms")).toInteger(), kTimeoutMs);
        for (const char *key : {"closed", "settled", "left", "moved_on"})
            QVERIFY2(answer.value(QLatin1String(key)).isDouble(), qPrintable(describe(run)));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'orders.close_expired' "
                                              "AND actor = 'desk' AND reason = 'desk run'")),
                 qint64(1));
        QCOMPARE(statusOf(orderNo), QStringLiteral("PENDING")); // young
    }
};

QTEST_GUILESS_MAIN(TestClosePath)
#include "tst_closepath.moc"
