// Refunds end to end: the real agent and payonce-sim, on the database of the
// dialect under test. Money is given back once: a double payment found by the patrol is
// refunded under four eyes — approved twice at the same moment and once more, its
// refund notification delivered 20 times at once — and exactly one refund reaches the
// simulator while the order keeps its own payment; an order's own payment refunded whole
// undoes every effect once; a refund the platform fails puts the order back to PAID with
// a refund_failed finding; bad input is refused with nothing changed.
//
// How a double payment is made without SQL: the agent must have processed two payments
// of one order, and the simulator must hold both trades (the extra one is refunded there
// under its own out_trade_no). Confirm refuses a second channel while the order is PAYING
// (409 order_state_conflict) and after it is PAID, so the first confirm is made to fail
// AFTER the platform created its trade: with the simulator's tamper_responses fault on
// that channel the trade exists at the platform but the agent cannot trust the answer,
// answers 503 gateway_unavailable and puts the order back to PENDING (the payment record
// stays, failed). The user then pays with the other channel (PAID), and later scans the
// first QR code too — the platform's trade is still open, so it is paid and notified: the
// agent acknowledges it as a double_payment. This is the real-world way it happens (a
// timed-out or garbled create answer, then a second channel).
//
// The slots run in order and share the agent, its database and the simulator; every
// simulator count is taken as a difference around the step that should cause it.

#include "agentconfig.h"
#include "agentfixture.h"
#include "httptestsupport.h"
#include "storagefixture.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QRandomGenerator>
#include <QTest>

#include <latch>
#include <memory>
#include <thread>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr qint64 kUser = 88;
constexpr int kWaitMs = 30000;
constexpr int kCopies = 20;
const QString kAmount = QStringLiteral("66.00");
constexpr qint64 kAmountFen = 6600;

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QByteArray reason(const QString &text)
{
    return json({{QStringLiteral("reason"), text}});
}

QString other(const QString &channel)
{
    return channel == u"wechat" ? QStringLiteral("alipay") : QStringLiteral("wechat");
}

QString refundNoOf(qint64 compensationId)
{
    return QStringLiteral("RF") + QString::number(compensationId).rightJustified(18, QLatin1Char('0'));
}

} // namespace

class TestRefundPath : public QObject {
    Q_OBJECT
private:
    AgentFixture m_agent;
    int m_serial = 0;

    // ---- SQL -----------------------------------------------------------------------

    QString text(const QString &sql, const QVariantList &binds)
    {
        return firstValueText(m_agent.database(), sql, binds);
    }

    QString orderStatus(const QString &orderNo)
    {
        return text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo});
    }

    QString refundStatus(const QString &refundNo)
    {
        return text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refundNo});
    }

    qint64 audits(const QString &action, const QString &target)
    {
        return m_agent.count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = ? AND target = ?"),
                             {action, target});
    }

    // ---- HTTP ----------------------------------------------------------------------

    HttpAnswer post(const QString &path, const char *token, const QByteArray &body)
    {
        return m_agent->call("POST", path, body, bearer(token));
    }

    HttpAnswer get(const QString &path, const char *token) { return m_agent->call("GET", path, {}, bearer(token)); }

    QJsonObject simStats() { return m_agent->simCall("GET", QStringLiteral("/sim/stats")).json(); }

    static qint64 stat(const QJsonObject &stats, const char *name, const QString &channel)
    {
        return stats.value(QLatin1String(name)).toObject().value(channel).toInteger();
    }

    /// The simulator's trade of that out_trade_no on that channel (empty when none).
    QJsonObject simTrade(const QString &channel, const QString &outTradeNo)
    {
        const HttpAnswer answer = m_agent->simCall("GET", QStringLiteral("/sim/trades/") + outTradeNo);
        for (const QJsonValue &t : answer.json().value(QStringLiteral("trades")).toArray()) {
            if (t.toObject().value(QStringLiteral("channel")).toString() == channel)
                return t.toObject();
        }
        return {};
    }

    /// The simulator's refund notification for out_refund_no (empty when none yet).
    QJsonObject simRefundNotification(const QString &outTradeNo, const QString &refundNo)
    {
        const HttpAnswer answer = m_agent->simCall("GET", QStringLiteral("/sim/notifications/") + outTradeNo);
        for (const QJsonValue &n : answer.json().value(QStringLiteral("notifications")).toArray()) {
            const QJsonObject o = n.toObject();
            if (o.value(QStringLiteral("kind")).toString() == u"refund"
                && o.value(QStringLiteral("out_refund_no")).toString() == refundNo)
                return o;
        }
        return {};
    }

    bool setFaults(const QJsonObject &faults)
    {
        const HttpAnswer answer = m_agent->simCall("POST", QStringLiteral("/sim/faults"), json(faults));
        if (answer.status != 200)
            qWarning("sim faults: %s", qPrintable(describe(answer)));
        return answer.status == 200;
    }

    // ---- orders and payments -------------------------------------------------------

    QString newOrder(const QString &tag)
    {
        const QString orderNo = QStringLiteral("ORD-RF-%1-%2").arg(tag).arg(++m_serial);
        QString error;
        // createOrder rewards coupon WELCOME10 and 100 points: the effects a refund undoes.
        if (!m_agent->createOrder(orderNo, kUser, kAmount, QStringLiteral("SKU-") + orderNo, &error)) {
            qWarning("%s", qPrintable(error));
            return {};
        }
        return orderNo;
    }

    HttpAnswer confirm(const QString &orderNo, const QString &channel, const QString &idempotencyKey)
    {
        const QString token = m_agent->issueToken(kUser, orderNo);
        return m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                             json({{QStringLiteral("token"), token},
                                   {QStringLiteral("order_no"), orderNo},
                                   {QStringLiteral("channel"), channel}}),
                             {{"X-User-Id", QByteArray::number(kUser)}, {"Idempotency-Key", idempotencyKey.toUtf8()}});
    }

    /// Paid at the simulator (which notifies the agent): the pay_no, or empty.
    QString payAtSimulator(const QString &channel, const QString &paymentNo)
    {
        const HttpAnswer paid = m_agent->simPay(channel, paymentNo);
        if (paid.status != 200) {
            qWarning("sim pay: %s", qPrintable(describe(paid)));
            return {};
        }
        return paid.json().value(QStringLiteral("pay_no")).toString();
    }

    struct Paid {
        QString orderNo;
        QString paymentNo;
        QString payNo;
    };

    /// A new order paid on `channel` through the simulator's notification: PAID, with its
    /// coupon, points and stock.
    void payOrder(const QString &tag, const QString &channel, Paid *out)
    {
        out->orderNo = newOrder(tag);
        QVERIFY(!out->orderNo.isEmpty());
        const HttpAnswer confirmed = confirm(out->orderNo, channel, out->orderNo);
        QVERIFY2(confirmed.status == 200, qPrintable(describe(confirmed)));
        out->paymentNo = confirmed.json().value(QStringLiteral("payment_no")).toString();
        QVERIFY(!out->paymentNo.isEmpty());
        out->payNo = payAtSimulator(channel, out->paymentNo);
        QVERIFY(!out->payNo.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(orderStatus(out->orderNo), QStringLiteral("PAID"), kWaitMs);
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {out->orderNo}), out->payNo);
        verifyEffectsKept(out->orderNo);
    }

    /// The payment's effects, as paid: one active coupon, 100 points, one unit of stock taken.
    void verifyEffectsKept(const QString &orderNo)
    {
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                          {orderNo}),
            qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT COALESCE(SUM(delta), 0) FROM point_log WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("100"));
        QCOMPARE(m_agent.count(
                     QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ? AND point_type LIKE 'refund:%'"),
                     {orderNo}),
                 qint64(0));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count(
                     QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND entry_key LIKE 'refund:%'"),
                     {orderNo}),
                 qint64(0));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"),
                      {QString(QStringLiteral("SKU-") + orderNo)}),
                 QStringLiteral("99"));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_id = ?"),
                               {QString(QStringLiteral("order.refunded:") + orderNo)}),
                 qint64(0));
    }

    /// A refund proposal by the operator: its id.
    qint64 propose(const QString &orderNo, const QJsonObject &extra = {}, const char *token = kDeskToken)
    {
        const HttpAnswer proposed = proposeAnswer(orderNo, extra, token);
        if (proposed.status != 201) {
            qWarning("propose: %s", qPrintable(describe(proposed)));
            return 0;
        }
        return proposed.json().value(QStringLiteral("id")).toInteger();
    }

    /// The answer to a refund proposal.
    HttpAnswer proposeAnswer(const QString &orderNo, const QJsonObject &extra = {}, const char *token = kDeskToken)
    {
        QJsonObject body{{QStringLiteral("kind"), QStringLiteral("refund")},
                         {QStringLiteral("order_no"), orderNo},
                         {QStringLiteral("reason"), QStringLiteral("customer asked for the money back")}};
        for (auto it = extra.begin(); it != extra.end(); ++it)
            body.insert(it.key(), it.value());
        return post(QStringLiteral("/api/v1/compensations"), token, json(body));
    }

    HttpAnswer approve(qint64 id, const char *token = kLeadToken)
    {
        return post(QStringLiteral("/api/v1/compensations/%1/approve").arg(id), token,
                    reason(QStringLiteral("checked")));
    }

    /// Waits for the refund notification's first round (all copies answered) and prints
    /// the answers the copies got, as the simulator recorded them.
    void waitForRefundNotification(const QString &outTradeNo, const QString &refundNo, int copies, QJsonObject *out)
    {
        QTRY_VERIFY_WITH_TIMEOUT(
            !simRefundNotification(outTradeNo, refundNo).value(QStringLiteral("history")).toArray().isEmpty(), kWaitMs);
        *out = simRefundNotification(outTradeNo, refundNo);
        const QJsonObject round = out->value(QStringLiteral("history")).toArray().first().toObject();
        QMap<QString, int> tally;
        for (const QJsonValue &r : round.value(QStringLiteral("results")).toArray()) {
            const QJsonObject o = r.toObject();
            tally[QStringLiteral("%1 %2")
                      .arg(o.value(QStringLiteral("status")).toInt())
                      .arg(o.value(QStringLiteral("outcome")).toString())] += 1;
        }
        QStringList parts;
        for (auto it = tally.cbegin(); it != tally.cend(); ++it)
            parts.append(QStringLiteral("%1 × %2").arg(it.value()).arg(it.key()));
        qInfo("refund notification %s (%s): first round %d copies answered [%s]; deliveries %d, acknowledgements %d, "
              "state %s",
              qPrintable(refundNo), qPrintable(out->value(QStringLiteral("refund_state")).toString()),
              round.value(QStringLiteral("copies")).toInt(), qPrintable(parts.join(u", ")),
              out->value(QStringLiteral("deliveries")).toInt(), out->value(QStringLiteral("acknowledgements")).toInt(),
              qPrintable(out->value(QStringLiteral("state")).toString()));
        QCOMPARE(round.value(QStringLiteral("copies")).toInt(), copies);
        QCOMPARE(round.value(QStringLiteral("results")).toArray().size(), copies);
        // Every copy acknowledged: the settlement's winner and each AlreadySettled.
        QCOMPARE(out->value(QStringLiteral("acknowledgements")).toInt(), copies);
        QCOMPARE(out->value(QStringLiteral("state")).toString(), QStringLiteral("acknowledged"));
    }

    static void printStats(const char *when, const QJsonObject &before, const QJsonObject &after,
                           const QString &channel)
    {
        qInfo("%s, sim stats on %s: refund_calls +%lld, refunds_created +%lld, refunded_fen +%lld", when,
              qPrintable(channel), stat(after, "refund_calls", channel) - stat(before, "refund_calls", channel),
              stat(after, "refunds_created", channel) - stat(before, "refunds_created", channel),
              stat(after, "refunded_fen", channel) - stat(before, "refunded_fen", channel));
    }

private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        // No patrol timer: every run (and every proposal) is the test's own.
        options.extraConfig = QJsonObject{noPatrolTimer()};
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }
    void cleanup()
    {
        if (m_agent)
            setFaults({{QStringLiteral("channel"), QStringLiteral("all")}});
    }

    // ---- A double payment is refunded once -----------------------------------------

    void doublePaymentIsRefundedOnce_data()
    {
        QTest::addColumn<QString>("extra"); // the channel of the extra payment
        QTest::newRow("extra on wechat") << QStringLiteral("wechat");
        QTest::newRow("extra on alipay") << QStringLiteral("alipay");
    }
    void doublePaymentIsRefundedOnce()
    {
        QFETCH(QString, extra);
        const QString kept = other(extra);
        const QString orderNo = newOrder(QStringLiteral("DP-") + extra);
        QVERIFY(!orderNo.isEmpty());

        // The first confirm's trade is made at the platform, but its answer is garbled:
        // 503, the order back to PENDING, the record failed (see the top of the file).
        QVERIFY(setFaults({{QStringLiteral("channel"), extra}, {QStringLiteral("tamper_responses"), true}}));
        const HttpAnswer garbled = confirm(orderNo, extra, orderNo + QStringLiteral("-first"));
        QVERIFY2(garbled.status == 503 && garbled.errorCode() == u"gateway_unavailable", qPrintable(describe(garbled)));
        QVERIFY(setFaults({{QStringLiteral("channel"), extra}}));
        QCOMPARE(orderStatus(orderNo), QStringLiteral("PENDING"));
        const QString extraPaymentNo = text(
            QStringLiteral("SELECT payment_no FROM payment_records WHERE order_no = ? AND channel = ?"),
            {orderNo, extra});
        QVERIFY(!extraPaymentNo.isEmpty());
        QVERIFY2(!simTrade(extra, extraPaymentNo).isEmpty(), "the platform has no trade for the first confirm");

        // The user pays with the other channel: PAID.
        const HttpAnswer second = confirm(orderNo, kept, orderNo + QStringLiteral("-second"));
        QVERIFY2(second.status == 200, qPrintable(describe(second)));
        const QString keptPaymentNo = second.json().value(QStringLiteral("payment_no")).toString();
        const QString keptPayNo = payAtSimulator(kept, keptPaymentNo);
        QVERIFY(!keptPayNo.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(orderStatus(orderNo), QStringLiteral("PAID"), kWaitMs);
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {orderNo}), keptPayNo);

        // ... and then scans the first code too: money received twice.
        const QString extraPayNo = payAtSimulator(extra, extraPaymentNo);
        QVERIFY(!extraPayNo.isEmpty());
        QVERIFY(extraPayNo != keptPayNo);
        QTRY_COMPARE_WITH_TIMEOUT(
            text(QStringLiteral("SELECT outcome FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                 {extraPayNo}),
            QStringLiteral("double_payment"), kWaitMs);
        const QString subject = extra + QLatin1Char(':') + extraPayNo;
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                          {subject}),
            qint64(1));
        QCOMPARE(orderStatus(orderNo), QStringLiteral("PAID"));
        verifyEffectsKept(orderNo);

        // The patrol finds it and proposes the refund of the extra payment (once, however
        // often it runs).
        for (int run = 0; run < 2; ++run) {
            const HttpAnswer patrol = post(QStringLiteral("/api/v1/reconciliation/run"), kDeskToken,
                                           reason(QStringLiteral("double payment complaint")));
            QVERIFY2(patrol.status == 200, qPrintable(describe(patrol)));
            bool found = false;
            for (const QJsonValue &f : patrol.json().value(QStringLiteral("findings")).toArray()) {
                found = found
                        || (f.toObject().value(QStringLiteral("kind")).toString() == u"double_payment"
                            && f.toObject().value(QStringLiteral("subject")).toString() == subject);
            }
            QVERIFY2(found, qPrintable(describe(patrol)));
        }
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                          {subject}),
            qint64(1));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE order_no = ? AND kind = 'refund' "
                                         "AND proposed_by = 'system:patrol'"),
                          {orderNo}),
            qint64(1));
        const qint64 patrolId = text(QStringLiteral(
                                         "SELECT id FROM compensations WHERE order_no = ? AND kind = 'refund' "
                                         "AND proposed_by = 'system:patrol'"),
                                     {orderNo})
                                    .toLongLong();
        QVERIFY(patrolId > 0);
        {
            const HttpAnswer listed = get(QStringLiteral("/api/v1/compensations?status=proposed"), kViewToken);
            QVERIFY2(listed.status == 200, qPrintable(describe(listed)));
            QJsonObject mine;
            for (const QJsonValue &c : QJsonDocument::fromJson(listed.body).array()) {
                if (c.toObject().value(QStringLiteral("id")).toInteger() == patrolId)
                    mine = c.toObject();
            }
            QCOMPARE(mine.value(QStringLiteral("kind")).toString(), QStringLiteral("refund"));
            QCOMPARE(mine.value(QStringLiteral("pay_no")).toString(), extraPayNo);
            QCOMPARE(mine.value(QStringLiteral("amount")).toString(), kAmount);
            QCOMPARE(mine.value(QStringLiteral("proposed_by")).toString(), QStringLiteral("system:patrol"));
        }

        // Four eyes. An operator cannot decide at all; an approver's own proposal cannot be
        // approved by the same approver; an operator's own proposal is rejected by the approver.
        const HttpAnswer byOperator = approve(patrolId, kDeskToken);
        QVERIFY2(byOperator.status == 403 && byOperator.errorCode() == u"forbidden", qPrintable(describe(byOperator)));
        const qint64 deskId = propose(orderNo, {{QStringLiteral("pay_no"), extraPayNo}});
        QVERIFY(deskId > 0);
        const HttpAnswer deskSelf = approve(deskId, kDeskToken);
        QVERIFY2(deskSelf.status == 403 && deskSelf.errorCode() == u"forbidden", qPrintable(describe(deskSelf)));
        const qint64 leadId = propose(orderNo, {{QStringLiteral("pay_no"), extraPayNo}}, kLeadToken);
        QVERIFY(leadId > 0);
        const HttpAnswer leadSelf = approve(leadId, kLeadToken);
        QVERIFY2(leadSelf.status == 403 && leadSelf.errorCode() == u"four_eyes", qPrintable(describe(leadSelf)));
        QVERIFY(post(QStringLiteral("/api/v1/compensations/%1/reject").arg(deskId), kLeadToken,
                     reason(QStringLiteral("the patrol's proposal covers it")))
                    .status
                == 200);
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'proposed'"),
                          {leadId}),
            qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {orderNo}),
                 qint64(0));
        QCOMPARE(simTrade(extra, extraPaymentNo).value(QStringLiteral("refunds")).toArray().size(), 0);

        // The approver approves the patrol's proposal twice at the same moment, with every
        // refund notification of the channel sent as 20 concurrent copies.
        QVERIFY(setFaults({{QStringLiteral("channel"), extra}, {QStringLiteral("duplicate"), kCopies}}));
        const QJsonObject before = simStats();
        HttpAnswer answers[2];
        {
            std::latch start(2);
            std::thread a([&] {
                start.arrive_and_wait();
                answers[0] = approve(patrolId);
            });
            std::thread b([&] {
                start.arrive_and_wait();
                answers[1] = approve(patrolId);
            });
            a.join();
            b.join();
        }
        const QString refundNo = refundNoOf(patrolId);
        for (const HttpAnswer &answer : answers) {
            QVERIFY2(answer.status == 200, qPrintable(describe(answer)));
            QCOMPARE(
                answer.json().value(QStringLiteral("refund")).toObject().value(QStringLiteral("refund_no")).toString(),
                refundNo);
        }
        qInfo("two concurrent approvals: %s | %s", qPrintable(describe(answers[0])), qPrintable(describe(answers[1])));
        // One call to the platform for both approvals: the second finds the refund being sent.
        QCOMPARE(stat(simStats(), "refund_calls", extra) - stat(before, "refund_calls", extra), qint64(1));

        QJsonObject notification;
        waitForRefundNotification(extraPaymentNo, refundNo, kCopies, &notification);
        QCOMPARE(notification.value(QStringLiteral("refund_state")).toString(), QStringLiteral("SUCCESS"));
        QTRY_COMPARE_WITH_TIMEOUT(refundStatus(refundNo), QStringLiteral("succeeded"), kWaitMs);

        // Once more, after it all settled: 200, the same refund, nothing new sent.
        const QJsonObject beforeThird = simStats();
        const HttpAnswer third = approve(patrolId);
        QVERIFY2(third.status == 200, qPrintable(describe(third)));
        const QJsonObject thirdRefund = third.json().value(QStringLiteral("refund")).toObject();
        QCOMPARE(thirdRefund.value(QStringLiteral("refund_no")).toString(), refundNo);
        QCOMPARE(thirdRefund.value(QStringLiteral("status")).toString(), QStringLiteral("succeeded"));
        QCOMPARE(stat(simStats(), "refund_calls", extra), stat(beforeThird, "refund_calls", extra));

        const QJsonObject after = simStats();
        printStats("double payment refunded", before, after, extra);
        QCOMPARE(stat(after, "refunds_created", extra) - stat(before, "refunds_created", extra), qint64(1));
        QCOMPARE(stat(after, "refunded_fen", extra) - stat(before, "refunded_fen", extra), kAmountFen);
        QCOMPARE(stat(after, "refunds_created", kept), stat(before, "refunds_created", kept));
        QCOMPARE(stat(after, "refunded_fen", kept), stat(before, "refunded_fen", kept));
        const QJsonObject extraTrade = simTrade(extra, extraPaymentNo);
        QCOMPARE(extraTrade.value(QStringLiteral("refunds")).toArray().size(), 1);
        QCOMPARE(extraTrade.value(QStringLiteral("refunded_fen")).toInteger(), kAmountFen);
        QCOMPARE(extraTrade.value(QStringLiteral("refunds"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QStringLiteral("out_refund_no"))
                     .toString(),
                 refundNo);
        // The original payment stays: its trade untouched, the order PAID by it.
        const QJsonObject keptTrade = simTrade(kept, keptPaymentNo);
        QCOMPARE(keptTrade.value(QStringLiteral("refunded_fen")).toInteger(), qint64(0));
        QCOMPARE(keptTrade.value(QStringLiteral("refunds")).toArray().size(), 0);
        QCOMPARE(orderStatus(orderNo), QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {orderNo}), keptPayNo);
        verifyEffectsKept(orderNo);

        // The agent's side: one refund row, succeeded once, for the extra payment.
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE refund_no = ? AND status = 'succeeded' "
                                         "AND pay_no = ? AND payment_no = ? AND channel = ? AND amount_fen = ? "
                                         "AND own_payment = 0"),
                          {refundNo, extraPayNo, extraPaymentNo, extra, kAmountFen}),
            qint64(1));
        const QString refundTarget = QStringLiteral("refund:") + refundNo;
        QCOMPARE(audits(QStringLiteral("refund.succeeded"), refundTarget), qint64(1));
        QCOMPARE(audits(QStringLiteral("refund.failed"), refundTarget), qint64(0));
        const QString compensationTarget = QStringLiteral("compensation:%1").arg(patrolId);
        QCOMPARE(audits(QStringLiteral("compensation.approve"), compensationTarget), qint64(1));
        QCOMPARE(audits(QStringLiteral("compensation.execute"), compensationTarget), qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'refund.succeeded' "
                                              "AND actor = 'system:refunds' AND target = ?"),
                               {refundTarget}),
                 qint64(1));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'executed'"),
                          {patrolId}),
            qint64(1));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_failed' AND order_no = ?"),
                          {orderNo}),
            qint64(0));
        const HttpAnswer listed = get(QStringLiteral("/api/v1/refunds?order_no=") + orderNo, kViewToken);
        QVERIFY2(listed.status == 200, qPrintable(describe(listed)));
        const QJsonArray rows = QJsonDocument::fromJson(listed.body).array();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.first().toObject().value(QStringLiteral("status")).toString(), QStringLiteral("succeeded"));
        QCOMPARE(rows.first().toObject().value(QStringLiteral("own_payment")).toBool(), false);
        QCOMPARE(rows.first().toObject().value(QStringLiteral("amount")).toString(), kAmount);
    }

    // ---- A full refund undoes every effect once ------------------------------------

    void fullRefundUndoesEveryEffectOnce_data()
    {
        QTest::addColumn<QString>("channel");
        QTest::newRow("wechat") << QStringLiteral("wechat");
        QTest::newRow("alipay") << QStringLiteral("alipay");
    }
    void fullRefundUndoesEveryEffectOnce()
    {
        QFETCH(QString, channel);
        Paid paid;
        payOrder(QStringLiteral("FULL-") + channel, channel, &paid);
        if (QTest::currentTestFailed())
            return;
        const QString &orderNo = paid.orderNo;
        const QString sku = QStringLiteral("SKU-") + orderNo;

        const qint64 id = propose(orderNo);
        QVERIFY(id > 0);
        const QString refundNo = refundNoOf(id);
        QVERIFY(setFaults({{QStringLiteral("channel"), channel}, {QStringLiteral("duplicate"), kCopies}}));
        const QJsonObject before = simStats();
        const HttpAnswer approved = approve(id);
        QVERIFY2(approved.status == 200, qPrintable(describe(approved)));
        QCOMPARE(approved.json().value(QStringLiteral("status")).toString(), QStringLiteral("executed"));
        const QJsonObject refund = approved.json().value(QStringLiteral("refund")).toObject();
        QCOMPARE(refund.value(QStringLiteral("refund_no")).toString(), refundNo);
        QCOMPARE(refund.value(QStringLiteral("own_payment")).toBool(), true);
        QCOMPARE(refund.value(QStringLiteral("amount")).toString(), kAmount);
        qInfo("approved: refund %s", qPrintable(QString::fromUtf8(json(refund))));

        QJsonObject notification;
        waitForRefundNotification(paid.paymentNo, refundNo, kCopies, &notification);
        QTRY_COMPARE_WITH_TIMEOUT(refundStatus(refundNo), QStringLiteral("succeeded"), kWaitMs);
        QCOMPARE(orderStatus(orderNo), QStringLiteral("REFUNDED"));

        // Approved again: the same refund, nothing sent.
        const QJsonObject beforeAgain = simStats();
        const HttpAnswer again = approve(id);
        QVERIFY2(again.status == 200, qPrintable(describe(again)));
        QCOMPARE(again.json().value(QStringLiteral("refund")).toObject().value(QStringLiteral("refund_no")).toString(),
                 refundNo);
        QCOMPARE(stat(simStats(), "refund_calls", channel), stat(beforeAgain, "refund_calls", channel));

        const QJsonObject after = simStats();
        printStats("own payment refunded", before, after, channel);
        QCOMPARE(stat(after, "refund_calls", channel) - stat(before, "refund_calls", channel), qint64(1));
        QCOMPARE(stat(after, "refunds_created", channel) - stat(before, "refunds_created", channel), qint64(1));
        QCOMPARE(stat(after, "refunded_fen", channel) - stat(before, "refunded_fen", channel), kAmountFen);
        const QJsonObject trade = simTrade(channel, paid.paymentNo);
        QCOMPARE(trade.value(QStringLiteral("refunds")).toArray().size(), 1);
        QCOMPARE(trade.value(QStringLiteral("refunded_fen")).toInteger(), kAmountFen);

        // Every effect undone once.
        QCOMPARE(orderStatus(orderNo), QStringLiteral("REFUNDED"));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE refund_no = ? AND own_payment = 1 "
                                              "AND pay_no = ? AND amount_fen = ?"),
                               {refundNo, paid.payNo, kAmountFen}),
                 qint64(1));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'frozen'"),
                          {orderNo}),
            qint64(1));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                          {orderNo}),
            qint64(0));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ? AND point_type = ?"),
                               {orderNo, QString(QStringLiteral("refund:") + refundNo)}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT delta FROM point_log WHERE order_no = ? AND point_type = ?"),
                      {orderNo, QString(QStringLiteral("refund:") + refundNo)}),
                 QStringLiteral("-100"));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), {orderNo}),
                 qint64(2));
        QCOMPARE(text(QStringLiteral("SELECT COALESCE(SUM(delta), 0) FROM point_log WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("0"));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND entry_key = ?"),
                               {orderNo, QString(QStringLiteral("refund:") + refundNo)}),
                 qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral(
                                   "SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND sku_id = ? AND entry_key = ? "
                                   "AND reason = 'refund' AND qty = -1"),
                               {orderNo, sku, QString(QStringLiteral("refund:") + refundNo)}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT SUM(qty) FROM stock_log WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("0"));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {sku}), QStringLiteral("100"));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_id = ?"),
                               {QString(QStringLiteral("order.refunded:") + orderNo)}),
                 qint64(1));
        QCOMPARE(
            m_agent.count(
                QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ? AND event_type = 'order.refunded'"),
                {orderNo}),
            qint64(1));
        QCOMPARE(audits(QStringLiteral("refund.succeeded"), QStringLiteral("refund:") + refundNo), qint64(1));
        QCOMPARE(audits(QStringLiteral("refund.failed"), QStringLiteral("refund:") + refundNo), qint64(0));
        QCOMPARE(audits(QStringLiteral("compensation.approve"), QStringLiteral("compensation:%1").arg(id)), qint64(1));
        QCOMPARE(audits(QStringLiteral("compensation.execute"), QStringLiteral("compensation:%1").arg(id)), qint64(1));
        QCOMPARE(m_agent.count(
                     QStringLiteral("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'executed'"), {id}),
                 qint64(1));

        // A second refund of the same (refunded) order is refused when proposed, nothing written.
        const HttpAnswer second = proposeAnswer(orderNo);
        qInfo("a second refund of a refunded order: %s", qPrintable(describe(second)));
        QVERIFY2(second.status == 409 && second.errorCode() == u"order_not_refundable", qPrintable(describe(second)));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(stat(simStats(), "refunds_created", channel), stat(after, "refunds_created", channel));
    }

    void aFailedRefundPutsTheOrderBackToPaid_data()
    {
        QTest::addColumn<QString>("channel");
        QTest::newRow("wechat") << QStringLiteral("wechat"); // PROCESSING, then REFUND.ABNORMAL notified
        QTest::newRow("alipay") << QStringLiteral("alipay"); // refused synchronously
    }
    void aFailedRefundPutsTheOrderBackToPaid()
    {
        QFETCH(QString, channel);
        Paid paid;
        payOrder(QStringLiteral("FAIL-") + channel, channel, &paid);
        if (QTest::currentTestFailed())
            return;
        const QString &orderNo = paid.orderNo;

        const qint64 id = propose(orderNo);
        QVERIFY(id > 0);
        const QString refundNo = refundNoOf(id);
        QVERIFY(setFaults({{QStringLiteral("channel"), channel}, {QStringLiteral("refund_fail"), true}}));
        const QJsonObject before = simStats();
        const HttpAnswer approved = approve(id);
        QVERIFY2(approved.status == 200, qPrintable(describe(approved)));
        qInfo("approved under refund_fail: %s", qPrintable(describe(approved)));
        QCOMPARE(
            approved.json().value(QStringLiteral("refund")).toObject().value(QStringLiteral("refund_no")).toString(),
            refundNo);

        QTRY_COMPARE_WITH_TIMEOUT(refundStatus(refundNo), QStringLiteral("failed"), kWaitMs);
        if (channel == u"wechat") {
            QJsonObject notification;
            waitForRefundNotification(paid.paymentNo, refundNo, 1, &notification);
            QCOMPARE(notification.value(QStringLiteral("refund_state")).toString(), QStringLiteral("CLOSED"));
        }
        QCOMPARE(orderStatus(orderNo), QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {orderNo}), paid.payNo);
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_failed' AND subject = ? "
                                         "AND order_no = ? AND status = 'open'"),
                          {QString(QStringLiteral("refund:") + refundNo), orderNo}),
            qint64(1));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'failed'"),
                               {id}),
                 qint64(1));
        QCOMPARE(audits(QStringLiteral("refund.failed"), QStringLiteral("refund:") + refundNo), qint64(1));
        QCOMPARE(audits(QStringLiteral("refund.succeeded"), QStringLiteral("refund:") + refundNo), qint64(0));
        const HttpAnswer failedList = get(QStringLiteral("/api/v1/compensations?status=failed"), kViewToken);
        QVERIFY2(failedList.status == 200 && failedList.body.contains(refundNo.toUtf8()),
                 qPrintable(describe(failedList)));

        // Nothing refunded at the platform, no effect undone.
        const QJsonObject after = simStats();
        printStats("refund under refund_fail", before, after, channel);
        QCOMPARE(stat(after, "refunded_fen", channel), stat(before, "refunded_fen", channel));
        QCOMPARE(simTrade(channel, paid.paymentNo).value(QStringLiteral("refunded_fen")).toInteger(), qint64(0));
        verifyEffectsKept(orderNo);
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND entry_key = ?"),
                               {orderNo, QString(QStringLiteral("refund:") + refundNo)}),
                 qint64(0));

        // Approving the failed one again sends nothing new and changes nothing.
        const HttpAnswer again = approve(id);
        qInfo("approving a failed refund again: %s", qPrintable(describe(again)));
        QCOMPARE(stat(simStats(), "refund_calls", channel), stat(after, "refund_calls", channel));
        QCOMPARE(refundStatus(refundNo), QStringLiteral("failed"));
        QCOMPARE(orderStatus(orderNo), QStringLiteral("PAID"));
    }

    // ---- Refused: a refund of an unpaid order, a forged refund notification --------

    void proposingARefundOfAnUnpaidOrderIsRefused()
    {
        const QString orderNo = newOrder(QStringLiteral("UNPAID"));
        QVERIFY(!orderNo.isEmpty());
        const QJsonObject before = simStats();
        const HttpAnswer refused = proposeAnswer(orderNo);
        qInfo("proposing a refund of an order with no payment: %s", qPrintable(describe(refused)));
        QVERIFY2(refused.status == 409 && refused.errorCode() == u"order_not_refundable",
                 qPrintable(describe(refused)));
        // Nothing written: no proposal, no refund, nothing audited.
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE order_no = ?"), {orderNo}),
                 qint64(0));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {orderNo}),
                 qint64(0));
        QCOMPARE(m_agent.count(
                     QStringLiteral(
                         "SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.propose' AND after_state LIKE ?"),
                     {QString(QStringLiteral("%") + orderNo + QStringLiteral("%"))}),
                 qint64(0));
        QCOMPARE(orderStatus(orderNo), QStringLiteral("PENDING"));
        const QJsonObject after = simStats();
        for (const QString &channel : {QStringLiteral("wechat"), QStringLiteral("alipay")})
            QCOMPARE(stat(after, "refund_calls", channel), stat(before, "refund_calls", channel));
    }

    void partialRefundsThroughTheSimulator_data()
    {
        QTest::addColumn<QString>("channel");
        QTest::newRow("wechat") << QStringLiteral("wechat"); // amount.refund < amount.total, then REFUND.SUCCESS
        QTest::newRow("alipay") << QStringLiteral("alipay"); // refund_amount with its own out_request_no
    }
    void partialRefundsThroughTheSimulator()
    {
        QFETCH(QString, channel);
        Paid paid;
        payOrder(QStringLiteral("PART-") + channel, channel, &paid);
        if (QTest::currentTestFailed())
            return;
        const QString &orderNo = paid.orderNo;
        const QString sku = QStringLiteral("SKU-") + orderNo;
        const QJsonArray oneUnit{QJsonObject{{QStringLiteral("sku_id"), sku}, {QStringLiteral("qty"), 1}}};

        // Bad input first: each refused with its code, nothing written.
        struct Bad {
            const char *what;
            QJsonObject extra;
            int status;
            const char *code;
        };
        const QList<Bad> bad{
            {"amount 0", {{QStringLiteral("amount"), QStringLiteral("0.00")}}, 400, "invalid_amount"},
            {"negative", {{QStringLiteral("amount"), QStringLiteral("-1.00")}}, 400, "invalid_amount"},
            {"over", {{QStringLiteral("amount"), QStringLiteral("66.01")}}, 409, "refund_exceeds_payment"},
            {"unknown sku",
             {{QStringLiteral("amount"), QStringLiteral("1.00")},
              {QStringLiteral("items"), QJsonArray{QJsonObject{{QStringLiteral("sku_id"), QStringLiteral("SKU-NONE")},
                                                               {QStringLiteral("qty"), 1}}}}},
             400,
             "refund_sku_not_in_order"},
            {"more than bought",
             {{QStringLiteral("amount"), QStringLiteral("1.00")},
              {QStringLiteral("items"),
               QJsonArray{QJsonObject{{QStringLiteral("sku_id"), sku}, {QStringLiteral("qty"), 2}}}}},
             400,
             "refund_items_exceed_order"},
            {"items, no amount", {{QStringLiteral("items"), oneUnit}}, 400, "refund_amount_required"},
            {"qty 0",
             {{QStringLiteral("amount"), QStringLiteral("1.00")},
              {QStringLiteral("items"),
               QJsonArray{QJsonObject{{QStringLiteral("sku_id"), sku}, {QStringLiteral("qty"), 0}}}}},
             400,
             "invalid_request"},
        };
        for (const Bad &b : bad) {
            const HttpAnswer refused = proposeAnswer(orderNo, b.extra);
            qInfo("%s: %s", b.what, qPrintable(describe(refused)));
            QVERIFY2(refused.status == b.status && refused.errorCode() == QLatin1String(b.code),
                     qPrintable(describe(refused)));
        }
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE order_no = ?"), {orderNo}),
                 qint64(0));

        // The unit returned, 20.00 back: the order stays PAID.
        const QJsonObject before = simStats();
        const qint64 id = propose(
            orderNo, {{QStringLiteral("amount"), QStringLiteral("20.00")}, {QStringLiteral("items"), oneUnit}});
        QVERIFY(id > 0);
        const QString refundNo = refundNoOf(id);
        const HttpAnswer approved = approve(id);
        QVERIFY2(approved.status == 200, qPrintable(describe(approved)));
        const QJsonObject refund = approved.json().value(QStringLiteral("refund")).toObject();
        QCOMPARE(refund.value(QStringLiteral("partial")).toBool(), true);
        QCOMPARE(refund.value(QStringLiteral("amount")).toString(), QStringLiteral("20.00"));
        QTRY_COMPARE_WITH_TIMEOUT(refundStatus(refundNo), QStringLiteral("succeeded"), kWaitMs);
        QCOMPARE(orderStatus(orderNo), QStringLiteral("PAID"));
        const QJsonObject trade = simTrade(channel, paid.paymentNo);
        QCOMPARE(trade.value(QStringLiteral("refunded_fen")).toInteger(), qint64(2000));
        // 100 points × 2000 / 6600 = 30.3: 30 back; the coupon stays; the unit is on the shelf.
        QCOMPARE(text(QStringLiteral("SELECT SUM(delta) FROM point_log WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("70"));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                          {orderNo}),
            qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {sku}), QStringLiteral("100"));
        QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND entry_key = ?"),
                               {orderNo, QString(QStringLiteral("refund:") + refundNo)}),
                 qint64(1));

        // The rest: 46.00, its own refund number at the platform; the order REFUNDED.
        const qint64 restId = propose(orderNo);
        QVERIFY(restId > 0);
        const HttpAnswer rest = approve(restId);
        QVERIFY2(rest.status == 200, qPrintable(describe(rest)));
        QCOMPARE(rest.json().value(QStringLiteral("refund")).toObject().value(QStringLiteral("amount")).toString(),
                 QStringLiteral("46.00"));
        QTRY_COMPARE_WITH_TIMEOUT(refundStatus(refundNoOf(restId)), QStringLiteral("succeeded"), kWaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(orderStatus(orderNo), QStringLiteral("REFUNDED"), kWaitMs);
        const QJsonObject after = simStats();
        printStats("two partial refunds", before, after, channel);
        QCOMPARE(stat(after, "refunded_fen", channel) - stat(before, "refunded_fen", channel), kAmountFen);
        QCOMPARE(stat(after, "refunds_created", channel) - stat(before, "refunds_created", channel), qint64(2));
        const QJsonObject finalTrade = simTrade(channel, paid.paymentNo);
        QCOMPARE(finalTrade.value(QStringLiteral("refunds")).toArray().size(), 2);
        QCOMPARE(finalTrade.value(QStringLiteral("refunded_fen")).toInteger(), kAmountFen);
        QCOMPARE(text(QStringLiteral("SELECT SUM(delta) FROM point_log WHERE order_no = ?"), {orderNo}),
                 QStringLiteral("0"));
        QCOMPARE(
            m_agent.count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                          {orderNo}),
            qint64(0));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {sku}), QStringLiteral("100"));
        // The desk's list: both, newest first.
        const HttpAnswer list = get(QStringLiteral("/api/v1/refunds?order_no=") + orderNo, kViewToken);
        QVERIFY2(list.status == 200, qPrintable(describe(list)));
        const QJsonArray rows = QJsonDocument::fromJson(list.body).array();
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows.at(0).toObject().value(QStringLiteral("partial")).toBool(), false);
        QCOMPARE(rows.at(1).toObject().value(QStringLiteral("partial")).toBool(), true);
        QCOMPARE(rows.at(1).toObject().value(QStringLiteral("items")).toArray(), oneUnit);
    }

    void aRefundNotificationWithABadSignatureChangesNothing()
    {
        const QString serial = m_agent->simCall("GET", QStringLiteral("/sim/platform-key"))
                                   .json()
                                   .value(QStringLiteral("serial"))
                                   .toString();
        QVERIFY(!serial.isEmpty());
        // What a settled refund would change: refunds and their status, audit rows,
        // findings, outbox events, order statuses.
        auto snapshot = [this] {
            return QList<qint64>{
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE status = 'succeeded'")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE status = 'failed'")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM audit_log")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM findings")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM outbox")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'REFUNDED'")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM point_log")),
                m_agent.count(QStringLiteral("SELECT COUNT(*) FROM stock_log")),
            };
        };
        const QList<qint64> before = snapshot();
        QVERIFY(!before.contains(-1));

        QByteArray signature(256, '\0');
        for (char &c : signature)
            c = char(QRandomGenerator::global()->bounded(256));
        QByteArray nonce = QByteArray::number(QRandomGenerator::global()->generate64(), 16);
        const QByteArray body = json(
            {{QStringLiteral("id"), QStringLiteral("EV-forged-1")},
             {QStringLiteral("create_time"), QStringLiteral("2024-01-01T00:00:00+08:00")},
             {QStringLiteral("resource_type"), QStringLiteral("encrypt-resource")},
             {QStringLiteral("event_type"), QStringLiteral("REFUND.SUCCESS")},
             {QStringLiteral("summary"), QStringLiteral("refund")},
             {QStringLiteral("resource"),
              QJsonObject{{QStringLiteral("original_type"), QStringLiteral("refund")},
                          {QStringLiteral("algorithm"), QStringLiteral("AEAD_AES_256_GCM")},
                          {QStringLiteral("ciphertext"), QString::fromLatin1(QByteArray(64, 'A').toBase64())},
                          {QStringLiteral("associated_data"), QStringLiteral("refund")},
                          {QStringLiteral("nonce"), QStringLiteral("abcdefghijkl")}}}});
        const HttpAnswer answer = m_agent->call(
            "POST", QStringLiteral("/api/v1/callbacks/wechat/refund"), body,
            {{"Content-Type", "application/json"},
             {"Wechatpay-Timestamp", QByteArray::number(QDateTime::currentSecsSinceEpoch())},
             {"Wechatpay-Nonce", nonce},
             {"Wechatpay-Signature", signature.toBase64()},
             {"Wechatpay-Serial", serial.toLatin1()},
             {"Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048"}});
        qInfo("forged refund notification: %s (layer %s)", qPrintable(describe(answer)),
              answer.header("X-Payonce-Layer").constData());
        QCOMPARE(answer.status, 401);
        QCOMPARE(answer.json().value(QStringLiteral("code")).toString(), QStringLiteral("FAIL"));
        QCOMPARE(snapshot(), before);

        // The same for Alipay's refund route: a trade_status_sync with a refund's fields,
        // signed by nobody.
        const QByteArray form = "notify_type=trade_status_sync&notify_id=forged1&notify_time=2024-01-01+00%3A00%3A00"
                                "&app_id=2021000000000000&out_trade_no="
                                + QByteArray("PAYNOSUCHTRADE")
                                + "&trade_no=2024010100000001&out_biz_no=RF000000000000000001&refund_fee=66.00"
                                  "&gmt_refund=2024-01-01+00%3A00%3A00&trade_status=TRADE_CLOSED&total_amount=66.00"
                                  "&sign_type=RSA2&sign="
                                + QByteArray(256, 'x').toBase64().toPercentEncoding();
        const HttpAnswer alipay = m_agent->call("POST", QStringLiteral("/api/v1/callbacks/alipay/refund"), form,
                                                {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}});
        qInfo("forged Alipay refund notification: %s (layer %s)", qPrintable(describe(alipay)),
              alipay.header("X-Payonce-Layer").constData());
        QCOMPARE(alipay.status, 401);
        QCOMPARE(alipay.body, QByteArray("failure"));
        QCOMPARE(snapshot(), before);

        // docs/openapi.yaml: every response to a callback request names the deciding layer, "rejected"
        // for a bad signature.
        QCOMPARE(answer.header("X-Payonce-Layer"), QByteArray("rejected"));
        QCOMPARE(alipay.header("X-Payonce-Layer"), QByteArray("rejected"));
    }
};

QTEST_GUILESS_MAIN(TestRefundPath)
#include "tst_refundpath.moc"
