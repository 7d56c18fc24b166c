// Refunds on a real migrated database of the dialect under test: the approval
// records the refund (CompensationService over SqlCompensationStore), RefundService sends
// it to a fake platform (its answers are the input of these cases; the real clients
// against payonce-sim are tst_gateway_sim and tst_refundpath) and settles it through
// SqlRefundStore. Paid orders are set up by SQL with every effect they earned.

#include "fakes/fakeplatform.h"
#include "storagefixture.h"

#include "core/ports/clock.h"
#include "core/ports/paymentgateway.h"
#include "core/settlement/compensationservice.h"
#include "core/settlement/patrol.h"
#include "core/settlement/refundservice.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlcompensationstore.h"
#include "sql/sqlpatrolstore.h"
#include "sql/sqlrefundstore.h"

#include <QTest>

#include <atomic>
#include <map>
#include <mutex>

using namespace payonce;
using namespace payonce::core;
using namespace payonce::testsupport;

namespace {

constexpr qint64 kUser = 31337;
constexpr qint64 kAmount = 8800;
constexpr qint64 kPoints = 120;
const QString kTemplate = QStringLiteral("TPL-THANKS");

RefundNotification notificationOf(const RefundRecord &refund, RefundNotification::State state)
{
    RefundNotification n;
    n.channel = refund.channel;
    n.state = state;
    n.refundNo = refund.refundNo;
    n.paymentNo = refund.paymentNo;
    n.payNo = refund.payNo;
    n.amountFen = refund.amountFen;
    n.totalFen = refund.totalFen;
    n.refundStatus = state == RefundNotification::State::Success  ? QStringLiteral("SUCCESS")
                     : state == RefundNotification::State::Closed ? QStringLiteral("CLOSED")
                                                                  : QStringLiteral("ABNORMAL");
    return n;
}

} // namespace

class TestRefunds : public QObject {
    Q_OBJECT
private:
    MigratedDatabase m_db;
    SystemClock m_clock;
    FakePlatform m_platform{kAmount}; ///< only its refund side is asked
    std::unique_ptr<sql::SqlAuditWriter> m_audit;
    std::unique_ptr<sql::SqlCompensationStore> m_compensationStore;
    std::unique_ptr<CompensationService> m_compensations;
    std::unique_ptr<sql::SqlRefundStore> m_refundStore;
    std::unique_ptr<RefundService> m_refunds;
    int m_serial = 0;

    sql::Database &db() { return *m_db.database; }

    qint64 count(const QString &sql, const QVariantList &binds = {}) { return countRowsOrWarn(db(), sql, binds); }

    QString text(const QString &sql, const QVariantList &binds) { return firstValueText(db(), sql, binds); }

    void exec(const QString &sql, const QVariantList &binds = {})
    {
        auto done = db().write([&](sql::Session &session) -> Result<void> {
            auto q = session.exec(sql, binds);
            if (!q)
                return q.error();
            return {};
        });
        QVERIFY2(done.ok(), qPrintable(done.ok() ? QString() : done.error().internalMessage));
    }

    struct Paid {
        QString orderNo;
        QString payNo;
        QString paymentNo;
        QString skuId;
    };

    /// A PAID order with everything it earned: 2 units of its SKU (8 left of 10), the
    /// reward coupon, the reward points, its payment processed and its record paid.
    Paid paidOrder()
    {
        Paid p;
        const QString serial = QString::number(++m_serial) + u'X'
                               + QString::number(QDateTime::currentMSecsSinceEpoch());
        p.orderNo = QStringLiteral("ORD-RF-") + serial;
        p.payNo = QStringLiteral("4200RF") + serial;
        p.paymentNo = QStringLiteral("PNRF") + serial;
        p.skuId = QStringLiteral("SKU-RF-") + serial;
        exec(QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, 8, 1)"), {p.skuId});
        exec(QStringLiteral("INSERT INTO orders (order_no, user_id, amount_fen, status, version, fence, pay_no, "
                            "paid_channel, reward_coupon_template, reward_points, created_at, updated_at, paid_at) "
                            "VALUES (?, ?, ?, 'PAID', 2, 1, ?, 'wechat', ?, ?, 1, 1, 1)"),
             {p.orderNo, kUser, kAmount, p.payNo, kTemplate, kPoints});
        exec(QStringLiteral("INSERT INTO order_items (order_no, sku_id, qty) VALUES (?, ?, 2)"), {p.orderNo, p.skuId});
        exec(QStringLiteral("INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) VALUES (?, ?, 2, 1, 1)"),
             {p.orderNo, p.skuId});
        exec(QStringLiteral("INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, created_at, "
                            "updated_at) VALUES (?, ?, ?, 'active', 1, 1, 1)"),
             {p.orderNo, kUser, kTemplate});
        exec(QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
                            "VALUES (?, ?, 'reward', ?, 1, 1)"),
             {p.orderNo, kUser, kPoints});
        exec(QStringLiteral("INSERT INTO payment_records (payment_no, order_no, channel, status, attempt, amount_fen, "
                            "created_at, updated_at) VALUES (?, ?, 'wechat', 'paid', 1, ?, 1, 1)"),
             {p.paymentNo, p.orderNo, kAmount});
        exec(QStringLiteral("INSERT INTO pay_callback_log (channel, pay_no, order_no, amount_fen, status, created_at) "
                            "VALUES ('wechat', ?, ?, ?, 'processed', 1)"),
             {p.payNo, p.orderNo, kAmount});
        return p;
    }

    /// Proposed by the desk, approved by the lead: the compensation as it stands afterwards.
    std::optional<Compensation> approved(const CompensationProposal &proposal, QString *error)
    {
        auto proposed = m_compensations->propose(proposal, m_clock.nowMs());
        if (!proposed.ok()) {
            if (error)
                *error = proposed.error().internalMessage;
            return std::nullopt;
        }
        auto decided = m_compensations->approve(proposed.value().compensation.id, QStringLiteral("lead"),
                                                QStringLiteral("checked"), m_clock.nowMs());
        if (!decided.ok()) {
            if (error)
                *error = decided.error().internalMessage;
            return std::nullopt;
        }
        return decided.value().compensation;
    }

    std::optional<Compensation> approvedCompensation(CompensationKind kind, const QString &orderNo,
                                                     QString *error = nullptr)
    {
        return approved({kind,
                         orderNo,
                         std::nullopt,
                         {},
                         QStringLiteral("desk"),
                         QStringLiteral("looks wrong"),
                         {},
                         std::nullopt,
                         {}},
                        error);
    }

    /// Proposed by the desk, approved by the lead: the refund as recorded.
    std::optional<RefundRecord> approvedRefund(const QString &orderNo, const QString &payNo = {},
                                               std::optional<qint64> amountFen = std::nullopt, QString *error = nullptr,
                                               const RefundItems &items = {})
    {
        const auto c = approved({CompensationKind::Refund,
                                 orderNo,
                                 std::nullopt,
                                 {},
                                 QStringLiteral("desk"),
                                 QStringLiteral("customer asked"),
                                 payNo,
                                 amountFen,
                                 items},
                                error);
        if (!c)
            return std::nullopt;
        auto found = m_refundStore->find(c->result.value(QStringLiteral("refund_no")).toString());
        if (!found.ok() || !found.value())
            return std::nullopt;
        return *found.value();
    }

    /// A refund of the order's own payment proposed by the desk (not decided).
    Result<ProposeOutcome> proposeRefund(const QString &orderNo, const RefundItems &items,
                                         std::optional<qint64> amountFen)
    {
        return m_compensations->propose({CompensationKind::Refund,
                                         orderNo,
                                         std::nullopt,
                                         {},
                                         QStringLiteral("desk"),
                                         QStringLiteral("customer returned goods"),
                                         {},
                                         amountFen,
                                         items},
                                        m_clock.nowMs());
    }

    QString orderStatus(const QString &orderNo)
    {
        return text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo});
    }

    /// 20 copies of the refund's SUCCESS at once: one settles it, 19 find it settled.
    void settleOnceUnderTwentyNotifications(const RefundRecord &refund)
    {
        std::mutex mutex;
        std::map<int, int> outcomes;
        QStringList failures;
        const RefundNotification n = notificationOf(refund, RefundNotification::State::Success);
        runConcurrently(20, [&](int) {
            auto settled = m_refunds->settle(n);
            std::lock_guard guard(mutex);
            if (!settled.ok())
                failures.append(settled.error().internalMessage);
            else
                ++outcomes[int(settled.value())];
        });
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
        qInfo("20 notifications of %s on %s: %d settled, %d already settled", qPrintable(refund.refundNo),
              qPrintable(dialectName(dialectUnderTest())), outcomes[int(RefundSettlement::Settled)],
              outcomes[int(RefundSettlement::AlreadySettled)]);
        QCOMPARE(outcomes[int(RefundSettlement::Settled)], 1);
        QCOMPARE(outcomes[int(RefundSettlement::AlreadySettled)], 19);
    }

    QString stockOf(const QString &skuId)
    {
        return text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {skuId});
    }

    /// What the order holds of the SKU by its own ledger: every entry written for it, net.
    QString netStockOf(const QString &orderNo, const QString &skuId)
    {
        return text(QStringLiteral("SELECT COALESCE(SUM(qty), 0) FROM stock_log WHERE order_no = ? AND sku_id = ?"),
                    {orderNo, skuId});
    }

    QString pointsOf(const QString &orderNo)
    {
        return text(QStringLiteral("SELECT COALESCE(SUM(delta), 0) FROM point_log WHERE order_no = ?"), {orderNo});
    }

    qint64 activeCoupons(const QString &orderNo)
    {
        return count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                     {orderNo});
    }

    void verifyRefundedOnce(const Paid &p, const QString &refundNo)
    {
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("REFUNDED"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                       {p.orderNo}),
                 qint64(0));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ? AND point_type = ? AND delta = ?"),
                  {p.orderNo, QString(QStringLiteral("refund:") + refundNo), -kPoints}),
            qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT SUM(delta) FROM point_log WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("0"));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND sku_id = ? AND entry_key = ? "
                                 "AND reason = 'refund' AND qty = -2"),
                  {p.orderNo, p.skuId, QString(QStringLiteral("refund:") + refundNo)}),
            qint64(1));
        QCOMPARE(netStockOf(p.orderNo, p.skuId), QStringLiteral("0"));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {p.skuId}), QStringLiteral("10"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_id = ?"),
                       {QString(QStringLiteral("order.refunded:") + p.orderNo)}),
                 qint64(1));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'refund.succeeded' AND target = ?"),
                  {QString(QStringLiteral("refund:") + refundNo)}),
            qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refundNo}),
                 QStringLiteral("succeeded"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_db.start(), m_db.error());
        m_audit = std::make_unique<sql::SqlAuditWriter>(db());
        m_compensationStore = std::make_unique<sql::SqlCompensationStore>(db());
        m_compensations = std::make_unique<CompensationService>(*m_compensationStore, *m_audit);
        m_refundStore = std::make_unique<sql::SqlRefundStore>(db());
        m_refunds = std::make_unique<RefundService>(
            *m_refundStore, [this](Channel) -> PaymentGateway * { return &m_platform; }, m_clock,
            RefundServiceOptions{QStringLiteral("http://agent/api/v1/callbacks/wechat/refund"),
                                 QStringLiteral("http://agent/api/v1/callbacks/alipay/refund")});
    }

    void aFullRefundSettlesOnceUnderTwentyNotifications()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        QCOMPARE(refund->status, RefundStatus::Requested);
        QVERIFY(refund->ownPayment);
        QCOMPARE(refund->amountFen, kAmount);
        QCOMPARE(refund->paymentNo, p.paymentNo);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("REFUNDING"));

        // Eight submissions at once (approvals sent twice, a follow-up): one call to the platform.
        std::atomic<int> submitFailures{0};
        runConcurrently(8, [&](int) {
            if (!m_refunds->submit(refund->refundNo).ok())
                ++submitFailures;
        });
        QCOMPARE(submitFailures.load(), 0);
        QCOMPARE(m_platform.refundCalls(refund->refundNo), 1);
        auto sent = m_refunds->submit(refund->refundNo);
        QVERIFY2(sent.ok(), qPrintable(sent.ok() ? QString() : sent.error().internalMessage));
        QCOMPARE(sent.value().status, RefundStatus::Processing);
        const GatewayRefundRequest request = m_platform.lastRefundRequest(refund->refundNo);
        QCOMPARE(request.paymentNo, p.paymentNo);
        QCOMPARE(request.amountFen, kAmount);
        QCOMPARE(request.totalFen, kAmount);
        QCOMPARE(request.notifyUrl, QStringLiteral("http://agent/api/v1/callbacks/wechat/refund"));
        // Submitting again (an approval sent twice) sends nothing: it is with the platform.
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        QCOMPARE(m_platform.refundCalls(refund->refundNo), 1);

        settleOnceUnderTwentyNotifications(*refund);
        if (QTest::currentTestFailed())
            return;
        verifyRefundedOnce(p, refund->refundNo);

        // Approving the same compensation again changes nothing and sends nothing.
        auto again = m_compensations->approve(refund->compensationId, QStringLiteral("lead"), QStringLiteral("again"),
                                              m_clock.nowMs());
        QVERIFY(again.ok());
        QVERIFY(!again.value().decidedNow);
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        QCOMPARE(m_platform.refundCalls(refund->refundNo), 1);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {p.orderNo}), qint64(1));
        verifyRefundedOnce(p, refund->refundNo);
    }

    void anExtraPaymentIsRefundedAndTheOrderStaysPaid()
    {
        const Paid p = paidOrder();
        const QString extra = QStringLiteral("EXTRA") + p.payNo;
        exec(QStringLiteral("INSERT INTO pay_callback_log (channel, pay_no, order_no, amount_fen, status, outcome, "
                            "created_at) VALUES ('wechat', ?, ?, ?, 'processed', 'double_payment', 2)"),
             {extra, p.orderNo, kAmount});
        // The patrol finds it (and proposes its refund once; the desk's proposals below are
        // the operator's own).
        sql::SqlPatrolStore patrolStore(db());
        Patrol patrol(patrolStore, *m_compensations);
        QVERIFY(patrol.runOnce(m_clock.nowMs()).ok());
        const QString subject = QStringLiteral("wechat:") + extra;
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                      {subject}),
                 QStringLiteral("open"));
        // Part of it first (the platform answers success at once, as Alipay does), then the rest.
        const auto first = approvedRefund(p.orderNo, extra, 3000);
        QVERIFY(first);
        QVERIFY(!first->ownPayment);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("PAID"));
        m_platform.queueRefundAnswer(first->refundNo,
                                     FakePlatform::madeRefund(first->refundNo, GatewayRefundState::Success));
        auto sent = m_refunds->submit(first->refundNo);
        QVERIFY(sent.ok());
        QCOMPARE(sent.value().status, RefundStatus::Succeeded);
        QCOMPARE(m_platform.lastRefundRequest(first->refundNo).payNo, extra);

        QString error;
        QVERIFY2(!approvedRefund(p.orderNo, extra, kAmount - 3000 + 1, &error), "an over-refund was recorded");
        QVERIFY2(error.contains(u"exceeds"), qPrintable(error));
        const auto rest = approvedRefund(p.orderNo, extra);
        QVERIFY(rest);
        QCOMPARE(rest->amountFen, kAmount - 3000);
        QVERIFY(m_refunds->submit(rest->refundNo).ok());
        QCOMPARE(m_refunds->settle(notificationOf(*rest, RefundNotification::State::Success)).value(),
                 RefundSettlement::Settled);

        // The order, its payment and its effects are untouched.
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {p.orderNo}), p.payNo);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                       {p.orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {p.skuId}), QStringLiteral("8"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {p.orderNo}), qint64(0));
        QCOMPARE(text(QStringLiteral("SELECT SUM(amount_fen) FROM refunds WHERE pay_no = ? AND status = 'succeeded'"),
                      {extra}),
                 QString::number(kAmount));
        // Given back in full: the next patrol run no longer finds it, and the finding resolves.
        QVERIFY(patrol.runOnce(m_clock.nowMs() + 1).ok());
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                      {subject}),
                 QStringLiteral("resolved"));
    }

    // ---- partial refunds of the order's own payment ----------------------------------

    void partialRefundsKeepTheOrderPaidUntilTheRestIsRefunded()
    {
        const Paid p = paidOrder(); // 88.00 paid, 2 units, 120 points, the coupon
        sql::SqlPatrolStore patrolStore(db());
        Patrol patrol(patrolStore, *m_compensations);

        // One unit returned, 20.00 back.
        QString error;
        const auto first = approvedRefund(p.orderNo, {}, 2000, &error, {{p.skuId, 1}});
        QVERIFY2(first, qPrintable(error));
        QVERIFY(first->ownPayment);
        QVERIFY(first->partial);
        QCOMPARE(first->amountFen, qint64(2000));
        QCOMPARE(first->items.value(p.skuId), qint64(1));
        QCOMPARE(orderStatus(p.orderNo), QStringLiteral("PAID"));
        QVERIFY(m_refunds->submit(first->refundNo).ok());
        const GatewayRefundRequest request = m_platform.lastRefundRequest(first->refundNo);
        QCOMPARE(request.amountFen, qint64(2000)); // amount.refund / refund_amount
        QCOMPARE(request.totalFen, kAmount);       // amount.total
        // In flight, the order is owed everything: nothing is given back yet.
        QCOMPARE(stockOf(p.skuId), QStringLiteral("8"));
        QCOMPARE(pointsOf(p.orderNo), QString::number(kPoints));
        settleOnceUnderTwentyNotifications(*first);
        QCOMPARE(orderStatus(p.orderNo), QStringLiteral("PAID"));
        QCOMPARE(stockOf(p.skuId), QStringLiteral("9"));
        QCOMPARE(netStockOf(p.orderNo, p.skuId), QStringLiteral("1"));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND sku_id = ? AND entry_key = ? "
                                 "AND reason = 'refund' AND qty = -1"),
                  {p.orderNo, p.skuId, QString(QStringLiteral("refund:") + first->refundNo)}),
            qint64(1));
        // 120 × 2000 / 8800 = 27.27…: 27 points back, rounded down.
        QCOMPARE(pointsOf(p.orderNo), QString::number(kPoints - 27));
        QCOMPARE(activeCoupons(p.orderNo), qint64(1));
        QCOMPARE(count(QStringLiteral(
                           "SELECT COUNT(*) FROM outbox WHERE aggregate_id = ? AND event_type = 'order.refunded'"),
                       {p.orderNo}),
                 qint64(0));
        // What is left is what the order is owed: the patrol finds nothing, restore_stock gives nothing.
        QVERIFY(patrol.runOnce(m_clock.nowMs()).ok());
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'effect_mismatch' AND order_no = ?"),
                       {p.orderNo}),
                 qint64(0));
        const auto restored = approvedCompensation(CompensationKind::RestoreStock, p.orderNo, &error);
        QVERIFY2(restored, qPrintable(error));
        QCOMPARE(restored->result.value(QStringLiteral("stock_refused")).toObject().value(p.skuId).toString(),
                 QStringLiteral("owed"));
        QCOMPARE(stockOf(p.skuId), QStringLiteral("9"));
        const auto reversed = approvedCompensation(CompensationKind::ReversePoints, p.orderNo, &error);
        QVERIFY2(reversed, qPrintable(error));
        QCOMPARE(reversed->result.value(QStringLiteral("points_delta")).toInteger(), qint64(0));

        // A price adjustment of 30.00, no items: 120 × 5000 / 8800 = 68 back in all, 41 of them now.
        const auto second = approvedRefund(p.orderNo, {}, 3000, &error);
        QVERIFY2(second, qPrintable(error));
        QVERIFY(second->partial);
        QVERIFY(m_refunds->submit(second->refundNo).ok());
        settleOnceUnderTwentyNotifications(*second);
        QCOMPARE(pointsOf(p.orderNo), QString::number(kPoints - 68));
        QCOMPARE(stockOf(p.skuId), QStringLiteral("9"));
        QCOMPARE(orderStatus(p.orderNo), QStringLiteral("PAID"));
        QVERIFY(patrol.runOnce(m_clock.nowMs() + 1).ok());
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'effect_mismatch' AND order_no = ?"),
                       {p.orderNo}),
                 qint64(0));

        // The rest (38.00, no amount given): the last refund, REFUNDING → REFUNDED, everything back.
        const auto rest = approvedRefund(p.orderNo, {}, std::nullopt, &error);
        QVERIFY2(rest, qPrintable(error));
        QVERIFY(!rest->partial);
        QCOMPARE(rest->amountFen, kAmount - 5000);
        QCOMPARE(orderStatus(p.orderNo), QStringLiteral("REFUNDING"));
        QVERIFY(m_refunds->submit(rest->refundNo).ok());
        settleOnceUnderTwentyNotifications(*rest);
        QCOMPARE(orderStatus(p.orderNo), QStringLiteral("REFUNDED"));
        QCOMPARE(pointsOf(p.orderNo), QStringLiteral("0"));
        QCOMPARE(stockOf(p.skuId), QStringLiteral("10"));
        QCOMPARE(netStockOf(p.orderNo, p.skuId), QStringLiteral("0"));
        QCOMPARE(activeCoupons(p.orderNo), qint64(0));
        QCOMPARE(text(QStringLiteral("SELECT SUM(amount_fen) FROM refunds WHERE order_no = ? AND status = 'succeeded'"),
                      {p.orderNo}),
                 QString::number(kAmount));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_id = ?"),
                       {QString(QStringLiteral("order.refunded:") + p.orderNo)}),
                 qint64(1));
        // Nothing is left to refund.
        auto more = proposeRefund(p.orderNo, {}, 1);
        QVERIFY(!more.ok());
        QCOMPARE(more.error().contractCode, QStringLiteral("order_not_refundable"));
    }

    void badPartialRefundsAreRefusedWithNothingWritten_data()
    {
        QTest::addColumn<qint64>("amountFen"); // 0: none given
        QTest::addColumn<QString>("sku");      // empty: no items; "*": the order's SKU
        QTest::addColumn<qint64>("qty");
        QTest::addColumn<QString>("orderStatus");
        QTest::addColumn<QString>("code");
        QTest::newRow("amount 0") << qint64(-0) << QString() << qint64(0) << QStringLiteral("PAID")
                                  << QStringLiteral("invalid_amount");
        QTest::newRow("negative amount") << qint64(-100) << QString() << qint64(0) << QStringLiteral("PAID")
                                         << QStringLiteral("invalid_amount");
        QTest::newRow("more than paid") << kAmount + 1 << QString() << qint64(0) << QStringLiteral("PAID")
                                        << QStringLiteral("refund_exceeds_payment");
        QTest::newRow("unknown sku") << qint64(100) << QStringLiteral("SKU-NOT-BOUGHT") << qint64(1)
                                     << QStringLiteral("PAID") << QStringLiteral("refund_sku_not_in_order");
        QTest::newRow("more items than bought")
            << qint64(100) << QStringLiteral("*") << qint64(3) << QStringLiteral("PAID")
            << QStringLiteral("refund_items_exceed_order");
        QTest::newRow("items without an amount") << qint64(0) << QStringLiteral("*") << qint64(1)
                                                 << QStringLiteral("PAID") << QStringLiteral("refund_amount_required");
        QTest::newRow("order REFUNDING") << qint64(100) << QString() << qint64(0) << QStringLiteral("REFUNDING")
                                         << QStringLiteral("order_not_refundable");
        QTest::newRow("order REFUNDED") << qint64(100) << QString() << qint64(0) << QStringLiteral("REFUNDED")
                                        << QStringLiteral("order_not_refundable");
    }
    void badPartialRefundsAreRefusedWithNothingWritten()
    {
        QFETCH(qint64, amountFen);
        QFETCH(QString, sku);
        QFETCH(qint64, qty);
        QFETCH(QString, orderStatus);
        QFETCH(QString, code);
        const Paid p = paidOrder();
        exec(QStringLiteral("UPDATE orders SET status = ? WHERE order_no = ?"), {orderStatus, p.orderNo});
        RefundItems items;
        if (!sku.isEmpty())
            items.insert(sku == u"*" ? p.skuId : sku, qty);
        const std::optional<qint64> amount = amountFen == 0 && QTest::currentDataTag() != QByteArray("amount 0")
                                                 ? std::nullopt
                                                 : std::optional<qint64>(amountFen);
        const qint64 compensationsBefore = count(QStringLiteral("SELECT COUNT(*) FROM compensations"));
        const qint64 auditBefore = count(QStringLiteral("SELECT COUNT(*) FROM audit_log"));
        auto refused = proposeRefund(p.orderNo, items, amount);
        QVERIFY2(!refused.ok(), "the proposal was accepted");
        qInfo("%s: %s (%s)", QTest::currentDataTag(), qPrintable(refused.error().contractCode),
              qPrintable(refused.error().publicMessage));
        QCOMPARE(refused.error().contractCode, code);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations")), compensationsBefore);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log")), auditBefore);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {p.orderNo}), qint64(0));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), orderStatus);
        QCOMPARE(stockOf(p.skuId), QStringLiteral("8"));
    }

    void approvalChecksTheItemsAgainstTheRefundsMadeMeanwhile()
    {
        // Two desks each propose one return of both units; the second approval finds them gone.
        const Paid p = paidOrder();
        auto a = proposeRefund(p.orderNo, {{p.skuId, 2}}, 1000);
        auto b = proposeRefund(p.orderNo, {{p.skuId, 1}}, 1000);
        QVERIFY(a.ok() && b.ok());
        QVERIFY(m_compensations
                    ->approve(a.value().compensation.id, QStringLiteral("lead"), QStringLiteral("ok"), m_clock.nowMs())
                    .ok());
        auto second = m_compensations->approve(b.value().compensation.id, QStringLiteral("lead"), QStringLiteral("ok"),
                                               m_clock.nowMs());
        QVERIFY(!second.ok());
        QCOMPARE(second.error().contractCode, QStringLiteral("refund_items_exceed_order"));
        QCOMPARE(text(QStringLiteral("SELECT status FROM compensations WHERE id = ?"), {b.value().compensation.id}),
                 QStringLiteral("proposed"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {p.orderNo}), qint64(1));
        // The proposer never approves their own, partial or not.
        auto own = m_compensations->approve(b.value().compensation.id, QStringLiteral("desk"), QStringLiteral("mine"),
                                            m_clock.nowMs());
        QVERIFY(!own.ok());
        QCOMPARE(own.error().code, ErrorCode::FourEyes);
    }

    void theRestWaitsForTheOpenPartialRefundsAndAFailedOneGivesItsShareBack()
    {
        const Paid p = paidOrder();
        QString error;
        const auto part = approvedRefund(p.orderNo, {}, 5000, &error, {{p.skuId, 1}});
        QVERIFY2(part, qPrintable(error));
        QVERIFY(m_refunds->submit(part->refundNo).ok()); // processing at the platform
        // The refund of the rest must mean the whole payment went back: it waits.
        auto rest = proposeRefund(p.orderNo, {}, kAmount - 5000);
        QVERIFY(!rest.ok());
        QCOMPARE(rest.error().contractCode, QStringLiteral("refund_in_flight"));
        auto defaultRest = proposeRefund(p.orderNo, {}, std::nullopt);
        QVERIFY(!defaultRest.ok());
        QCOMPARE(defaultRest.error().contractCode, QStringLiteral("refund_in_flight"));
        // Another part may go meanwhile (the order is PAID), but not more than is left.
        auto over = proposeRefund(p.orderNo, {}, kAmount - 5000 + 1);
        QVERIFY(!over.ok());
        QCOMPARE(over.error().contractCode, QStringLiteral("refund_exceeds_payment"));
        // While it is open, coupon and points compensations take nothing the order is owed.
        QVERIFY(approvedCompensation(CompensationKind::FreezeCoupon, p.orderNo));
        QVERIFY(approvedCompensation(CompensationKind::ReversePoints, p.orderNo));
        QCOMPARE(activeCoupons(p.orderNo), qint64(1));
        QCOMPARE(pointsOf(p.orderNo), QString::number(kPoints));
        // CLOSED: nothing went back, nothing is undone, the order is PAID, its share is free again.
        QCOMPARE(m_refunds->settle(notificationOf(*part, RefundNotification::State::Closed)).value(),
                 RefundSettlement::Settled);
        QCOMPARE(orderStatus(p.orderNo), QStringLiteral("PAID"));
        QCOMPARE(stockOf(p.skuId), QStringLiteral("8"));
        QCOMPARE(pointsOf(p.orderNo), QString::number(kPoints));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_failed' AND subject = ?"),
                       {QString(QStringLiteral("refund:") + part->refundNo)}),
                 qint64(1));
        const auto whole = approvedRefund(p.orderNo, {}, std::nullopt, &error);
        QVERIFY2(whole, qPrintable(error));
        QCOMPARE(whole->amountFen, kAmount);
        QCOMPARE(orderStatus(p.orderNo), QStringLiteral("REFUNDING"));
    }

    void concurrentPartialRefundsOfTheOrdersPaymentAcceptExactlyWhatFits()
    {
        // Six approvers at once, six refunds of 20.00 of one payment of 88.00, five rounds:
        // four fit (80.00), the others are refused refund_exceeds_payment, counted in rows.
        constexpr int kApprovers = 6;
        constexpr qint64 kPart = 2000;
        for (int round = 0; round < 5; ++round) {
            const Paid p = paidOrder();
            QList<qint64> ids;
            for (int i = 0; i < kApprovers; ++i) {
                auto proposed = proposeRefund(p.orderNo, {}, kPart);
                QVERIFY2(proposed.ok(), qPrintable(proposed.ok() ? QString() : proposed.error().internalMessage));
                ids << proposed.value().compensation.id;
            }
            std::mutex mutex;
            QStringList outcomes;
            runConcurrently(kApprovers, [&](int i) {
                auto decided = m_compensations->approve(ids.at(i), QStringLiteral("lead") + QString::number(i),
                                                        QStringLiteral("checked"), m_clock.nowMs());
                std::lock_guard guard(mutex);
                outcomes << (decided.ok() ? QStringLiteral("executed") : decided.error().contractCode);
            });
            const qint64 rows = count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE pay_no = ?"), {p.payNo});
            const qint64 recorded =
                text(QStringLiteral("SELECT COALESCE(SUM(amount_fen), 0) FROM refunds WHERE pay_no = ?"), {p.payNo})
                    .toLongLong();
            qInfo("round %d on %s: %lld refund rows, %lld fen recorded of %lld; %s", round,
                  qPrintable(dialectName(dialectUnderTest())), rows, recorded, kAmount,
                  qPrintable(outcomes.join(u' ')));
            QCOMPARE(rows, kAmount / kPart);
            QCOMPARE(recorded, (kAmount / kPart) * kPart);
            QCOMPARE(outcomes.count(QStringLiteral("executed")), int(kAmount / kPart));
            QCOMPARE(outcomes.count(QStringLiteral("refund_exceeds_payment")), kApprovers - int(kAmount / kPart));
            QCOMPARE(
                count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE order_no = ? AND status = 'executed'"),
                      {p.orderNo}),
                kAmount / kPart);
            QCOMPARE(orderStatus(p.orderNo), QStringLiteral("PAID"));
        }
    }

    void aFailedRefundPutsTheOrderBackToPaid()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        auto settled = m_refunds->settle(notificationOf(*refund, RefundNotification::State::Closed));
        QVERIFY(settled.ok());
        QCOMPARE(settled.value(), RefundSettlement::Settled);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refund->refundNo}),
                 QStringLiteral("failed"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_failed' AND subject = ? "
                                      "AND order_no = ? AND status = 'open'"),
                       {QString(QStringLiteral("refund:") + refund->refundNo), p.orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT status FROM compensations WHERE id = ?"), {refund->compensationId}),
                 QStringLiteral("failed"));
        // Nothing was undone.
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"),
                       {p.orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {p.skuId}), QStringLiteral("8"));
        // A success arriving after the failure changes nothing.
        QCOMPARE(m_refunds->settle(notificationOf(*refund, RefundNotification::State::Success)).value(),
                 RefundSettlement::AlreadySettled);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("PAID"));

        // A refusal by the platform fails it the same way.
        const Paid q = paidOrder();
        const auto refused = approvedRefund(q.orderNo);
        QVERIFY(refused);
        m_platform.queueRefundAnswer(refused->refundNo,
                                     Error::make(ErrorCode::Conflict, QStringLiteral("NOT_ENOUGH balance")));
        auto sent = m_refunds->submit(refused->refundNo);
        QVERIFY(sent.ok());
        QCOMPARE(sent.value().status, RefundStatus::Failed);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {q.orderNo}),
                 QStringLiteral("PAID"));
    }

    void anUnknownOutcomeIsFollowedUpUnderTheSameNumber()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        m_platform.queueRefundAnswer(refund->refundNo, Error::make(ErrorCode::Unavailable, QStringLiteral("timeout")));
        auto sent = m_refunds->submit(refund->refundNo);
        QVERIFY(sent.ok());
        QCOMPARE(sent.value().status, RefundStatus::Requested);
        QCOMPARE(sent.value().attempts, qint64(1));
        QVERIFY(sent.value().lastError.contains(u"timeout"));

        // The follow-up sends it again (same number), then asks, and settles it.
        auto first = m_refunds->followUp(m_clock.nowMs() + 1000);
        QVERIFY(first.ok());
        QCOMPARE(m_platform.refundCalls(refund->refundNo), 2);
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refund->refundNo}),
                 QStringLiteral("processing"));
        m_platform.setQueriedRefundState(refund->refundNo, GatewayRefundState::Success);
        auto second = m_refunds->followUp(m_clock.nowMs() + 1000);
        QVERIFY(second.ok());
        QVERIFY(second.value().settled >= 1);
        verifyRefundedOnce(p, refund->refundNo);
        QCOMPARE(m_platform.refundCalls(refund->refundNo), 2);
    }

    void aNotificationThatDoesNotMatchIsRefused()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        RefundNotification n = notificationOf(*refund, RefundNotification::State::Success);
        n.amountFen = kAmount - 1;
        auto refused = m_refunds->settle(n);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, ErrorCode::InvalidInput);
        n = notificationOf(*refund, RefundNotification::State::Success);
        n.refundNo = QStringLiteral("RF999999999999999999");
        QCOMPARE(m_refunds->settle(n).value(), RefundSettlement::Unknown);
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refund->refundNo}),
                 QStringLiteral("processing"));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("REFUNDING"));
    }

    // ---- settlement regressions: each of these failed on the code before its fix ----

    void restoreStockAfterTheRefundGivesNothingBack()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        m_platform.queueRefundAnswer(refund->refundNo,
                                     FakePlatform::madeRefund(refund->refundNo, GatewayRefundState::Success));
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        QCOMPARE(stockOf(p.skuId), QStringLiteral("10"));
        // The desk, looking at the stock, asks for it back once more: there is nothing left.
        QString error;
        const auto restored = approvedCompensation(CompensationKind::RestoreStock, p.orderNo, &error);
        QVERIFY2(restored, qPrintable(error));
        QCOMPARE(restored->status, QStringLiteral("executed"));
        QCOMPARE(stockOf(p.skuId), QStringLiteral("10")); // 12 before the fix
        QCOMPARE(netStockOf(p.orderNo, p.skuId), QStringLiteral("0"));
        QVERIFY(restored->result.value(QStringLiteral("stock_restored")).toObject().isEmpty());
        QCOMPARE(restored->result.value(QStringLiteral("stock_refused")).toObject().value(p.skuId).toString(),
                 QStringLiteral("nothing_taken"));
    }

    void twoRestoreStocksWhileRefundingThenSuccessGiveBackOnce()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        QVERIFY(m_refunds->submit(refund->refundNo).ok()); // processing: the order is REFUNDING
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("REFUNDING"));
        for (int i = 0; i < 2; ++i) {
            QString error;
            const auto restored = approvedCompensation(CompensationKind::RestoreStock, p.orderNo, &error);
            QVERIFY2(restored, qPrintable(error));
        }
        // While the refund may still fail, the order owes its stock as a PAID one does.
        QCOMPARE(stockOf(p.skuId), QStringLiteral("8"));
        QCOMPARE(m_refunds->settle(notificationOf(*refund, RefundNotification::State::Success)).value(),
                 RefundSettlement::Settled);
        QCOMPARE(stockOf(p.skuId), QStringLiteral("10")); // 14 before the fix
        QCOMPARE(netStockOf(p.orderNo, p.skuId), QStringLiteral("0"));
    }

    void couponAndPointsCompensationsWhileRefundingTakeNothingItIsOwed()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        QVERIFY(approvedCompensation(CompensationKind::FreezeCoupon, p.orderNo));
        QVERIFY(approvedCompensation(CompensationKind::ReversePoints, p.orderNo));
        QCOMPARE(activeCoupons(p.orderNo), qint64(1));
        QCOMPARE(pointsOf(p.orderNo), QString::number(kPoints));
        // The refund is closed without paying out: the order is PAID with all it earned.
        QCOMPARE(m_refunds->settle(notificationOf(*refund, RefundNotification::State::Closed)).value(),
                 RefundSettlement::Settled);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("PAID"));
        QCOMPARE(activeCoupons(p.orderNo), qint64(1));           // 0 before the fix
        QCOMPARE(pointsOf(p.orderNo), QString::number(kPoints)); // 0 before the fix
        QCOMPARE(stockOf(p.skuId), QStringLiteral("8"));
    }

    void weChatAbnormalKeepsTheRefundProcessing()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        const QString subject = QStringLiteral("refund:") + refund->refundNo;
        // ABNORMAL: the platform waits for manual handling; the money may still go back.
        for (int i = 0; i < 2; ++i) {
            auto abnormal = m_refunds->settle(notificationOf(*refund, RefundNotification::State::Abnormal));
            QVERIFY2(abnormal.ok(), qPrintable(abnormal.ok() ? QString() : abnormal.error().internalMessage));
            QCOMPARE(abnormal.value(), RefundSettlement::Abnormal);
        }
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refund->refundNo}),
                 QStringLiteral("processing")); // failed before the fix
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}),
                 QStringLiteral("REFUNDING"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_abnormal' AND subject = ? "
                                      "AND order_no = ? AND status = 'open' AND seen_count = 2"),
                       {subject, p.orderNo}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_failed' AND subject = ?"),
                       {subject}),
                 qint64(0));
        // Handled by hand at the platform: SUCCESS settles it, and the finding resolves.
        QCOMPARE(m_refunds->settle(notificationOf(*refund, RefundNotification::State::Success)).value(),
                 RefundSettlement::Settled);
        verifyRefundedOnce(p, refund->refundNo);
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE kind = 'refund_abnormal' AND subject = ?"),
                      {subject}),
                 QStringLiteral("resolved"));
        // The same through the submission's own answer and the follow-up's query.
        const Paid q = paidOrder();
        const auto second = approvedRefund(q.orderNo);
        QVERIFY(second);
        m_platform.queueRefundAnswer(second->refundNo,
                                     FakePlatform::madeRefund(second->refundNo, GatewayRefundState::Abnormal));
        auto sent = m_refunds->submit(second->refundNo);
        QVERIFY(sent.ok());
        QCOMPARE(sent.value().status, RefundStatus::Processing);
        m_platform.setQueriedRefundState(second->refundNo, GatewayRefundState::Abnormal);
        QVERIFY(m_refunds->followUp(m_clock.nowMs() + 60000).ok());
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {second->refundNo}),
                 QStringLiteral("processing"));
        m_platform.setQueriedRefundState(second->refundNo, GatewayRefundState::Closed);
        QVERIFY(m_refunds->followUp(m_clock.nowMs() + 120000).ok());
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {second->refundNo}),
                 QStringLiteral("failed"));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {q.orderNo}),
                 QStringLiteral("PAID"));
    }

    void concurrentRefundsOfOnePaymentNeverExceedIt()
    {
        // Two approvers, two refunds of 60% each of one extra payment, at the same instant,
        // ten times over: never more than the payment is recorded.
        for (int round = 0; round < 10; ++round) {
            const Paid p = paidOrder();
            const QString extra = QStringLiteral("EXTRA") + p.payNo;
            exec(QStringLiteral("INSERT INTO pay_callback_log (channel, pay_no, order_no, amount_fen, status, outcome, "
                                "created_at) VALUES ('wechat', ?, ?, ?, 'processed', 'double_payment', 2)"),
                 {extra, p.orderNo, kAmount});
            QList<qint64> ids;
            for (int i = 0; i < 2; ++i) {
                auto proposed = m_compensations->propose({CompensationKind::Refund,
                                                          p.orderNo,
                                                          std::nullopt,
                                                          {},
                                                          QStringLiteral("desk"),
                                                          QStringLiteral("paid twice"),
                                                          extra,
                                                          kAmount * 6 / 10,
                                                          {}},
                                                         m_clock.nowMs());
                QVERIFY(proposed.ok());
                ids << proposed.value().compensation.id;
            }
            runConcurrently(2, [&](int i) {
                (void)m_compensations->approve(ids.at(i), QStringLiteral("lead") + QString::number(i),
                                               QStringLiteral("checked"), m_clock.nowMs());
            });
            const qint64 recorded =
                text(QStringLiteral("SELECT COALESCE(SUM(amount_fen), 0) FROM refunds WHERE pay_no = ?"), {extra})
                    .toLongLong();
            QVERIFY2(recorded <= kAmount, qPrintable(QStringLiteral("round %1: %2 fen of refunds recorded against a "
                                                                    "payment of %3")
                                                         .arg(round)
                                                         .arg(recorded)
                                                         .arg(kAmount)));
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE pay_no = ?"), {extra}), qint64(1));
        }
    }
};

QTEST_GUILESS_MAIN(TestRefunds)
#include "tst_refunds.moc"
