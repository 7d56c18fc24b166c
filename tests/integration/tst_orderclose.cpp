// Order close on a real migrated database of the dialect under test, with the
// real closer, callback pipeline, patrol and embedded key store; the platform is a fake
// (what its close and query answer is the input of these cases). The same against the
// real agent and payonce-sim is tst_closepath.
// The race: several closers (as on several agents) work through the same expired orders at
// once; every order must be CLOSED by exactly one of them, audited once.

#include "settlementstack.h"

#include "core/callback/callbackpipeline.h"
#include "core/ports/clock.h"
#include "core/settlement/compensationservice.h"
#include "core/settlement/ordercloser.h"
#include "core/settlement/patrol.h"
#include "redis/embeddedkeystore.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlcallbackstore.h"
#include "sql/sqlcompensationstore.h"
#include "sql/sqlfenceepochsource.h"
#include "sql/sqlorderclosestore.h"
#include "sql/sqlorders.h"
#include "sql/sqlpatrolstore.h"

#include <QTest>

#include <atomic>
#include <mutex>

using namespace payonce;
using namespace payonce::core;
using namespace payonce::testsupport;
using namespace std::chrono_literals;

namespace {

constexpr qint64 kUser = 20250;
constexpr qint64 kAmount = 9900;
constexpr qint64 kTimeoutMs = 60 * 1000;
const QString kMchId = QStringLiteral("1900000001");

} // namespace

class TestOrderClose : public QObject {
    Q_OBJECT
private:
    SettlementStack m_stack;
    std::unique_ptr<sql::SqlOrderCloseStore> m_closeStore;
    FakePlatform m_platform{kAmount};
    int m_serial = 0;

    sql::Database &db() { return m_stack.database(); }
    qint64 count(const QString &sql, const QVariantList &binds = {}) { return m_stack.count(sql, binds); }
    QString text(const QString &sql, const QVariantList &binds) { return m_stack.text(sql, binds); }
    bool exec(const QString &sql, const QVariantList &binds = {}) { return m_stack.exec(sql, binds); }

    QString statusOf(const QString &orderNo)
    {
        return text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo});
    }

    struct Pending {
        QString orderNo;
        QString paymentNo; ///< empty: never confirmed
        QString payNo;     ///< what the platform calls the payment, if the user pays
        QString skuId;
    };

    /// A PENDING order last changed `ageMs` ago; with `recordStatus` non-empty, a wechat
    /// payment record in that status whose trade the platform holds as `trade`.
    Pending pendingOrder(qint64 ageMs, const QString &recordStatus = QStringLiteral("failed"),
                         FakePlatform::Trade trade = {})
    {
        Pending p;
        const QString serial = QString::number(++m_serial);
        const QString now = QString::number(QDateTime::currentMSecsSinceEpoch());
        p.orderNo = QStringLiteral("ORD-CLOSE-") + serial + u'-' + now;
        p.skuId = QStringLiteral("SKU-") + p.orderNo;
        p.payNo = QStringLiteral("4300") + serial + u'X' + now;
        exec(QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, 10, 1)"), {p.skuId});
        createOrder(db(), rewardedOrder(p.orderNo, kUser, kAmount, p.skuId, 2));
        const qint64 since = QDateTime::currentMSecsSinceEpoch() - ageMs;
        exec(QStringLiteral("UPDATE orders SET updated_at = ? WHERE order_no = ?"), {since, p.orderNo});
        if (!recordStatus.isEmpty()) {
            p.paymentNo = QStringLiteral("PNCLOSE") + serial + u'X' + now;
            exec(QStringLiteral(
                     "INSERT INTO payment_records (payment_no, order_no, channel, status, attempt, amount_fen, "
                     "created_at, updated_at) VALUES (?, ?, 'wechat', ?, 1, ?, ?, ?)"),
                 {p.paymentNo, p.orderNo, recordStatus, kAmount, since, since});
            if (trade.payNo.isEmpty())
                trade.payNo = p.payNo;
            m_platform.set(p.paymentNo, trade);
        }
        return p;
    }

    OrderCloser closer(int pageSize = 200)
    {
        OrderCloserPorts ports;
        ports.gateways = [this](Channel channel) -> PaymentGateway * {
            return channel == Channel::WeChat ? &m_platform : nullptr;
        };
        ports.callbacks = m_stack.pipeline.get();
        ports.modes = m_stack.modes.get();
        ports.audit = m_stack.audit.get();
        return OrderCloser(*m_closeStore, OrderCloserOptions{kTimeoutMs, pageSize}, ports);
    }

    static std::optional<OrderCloser::OrderOutcome> outcomeFor(const OrderCloser::Report &report,
                                                               const QString &orderNo)
    {
        for (const auto &o : report.orders) {
            if (o.orderNo == orderNo)
                return o;
        }
        return std::nullopt;
    }

    qint64 closeAudits(const QString &orderNo)
    {
        return count(
            QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'order.close' AND actor = 'system:closer' "
                           "AND target = ?"),
            {QString(QStringLiteral("order:") + orderNo)});
    }

    /// CLOSED by the closer: closed_at set, one transition (version + 1), records closed, one audit row.
    void verifyClosedOnce(const Pending &p, qint64 versionBefore)
    {
        QCOMPARE(statusOf(p.orderNo), QStringLiteral("CLOSED"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND closed_at IS NOT NULL"),
                       {p.orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT version FROM orders WHERE order_no = ?"), {p.orderNo}).toLongLong(),
                 versionBefore + 1);
        QCOMPARE(closeAudits(p.orderNo), qint64(1));
        if (!p.paymentNo.isEmpty()) {
            QCOMPARE(text(QStringLiteral("SELECT status FROM payment_records WHERE payment_no = ?"), {p.paymentNo}),
                     QStringLiteral("closed"));
            QCOMPARE(int(m_platform.trade(p.paymentNo).state), int(GatewayTradeState::Closed));
        }
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {p.orderNo}), qint64(0));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {p.orderNo}), qint64(0));
    }

    /// PAID by the platform's payment, every effect once, and not closed.
    void verifyPaidOnce(const Pending &p)
    {
        QCOMPARE(statusOf(p.orderNo), QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {p.orderNo}), p.payNo);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {p.orderNo}), qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), {p.orderNo}), qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), {p.orderNo}), qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {p.orderNo}), qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {p.skuId}), QStringLiteral("8"));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                  {p.payNo}),
            qint64(1));
        QCOMPARE(closeAudits(p.orderNo), qint64(0));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND closed_at IS NULL"), {p.orderNo}),
            qint64(1));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_stack.start(dialectUnderTest(), kMchId, &error), qPrintable(error));
        m_closeStore = std::make_unique<sql::SqlOrderCloseStore>(db());
    }

    void anExpiredOrderIsClosedAtThePlatformFirstThenClosed()
    {
        const Pending withTrade = pendingOrder(kTimeoutMs + 5000, QStringLiteral("pending"));
        const Pending neverConfirmed = pendingOrder(kTimeoutMs + 4000, QString());
        const Pending young = pendingOrder(1000, QStringLiteral("failed"));
        // What the order looked like at the moment the platform was asked to close its trade.
        std::mutex mutex;
        QStringList statusAtClose;
        m_platform.setOnClose([&](const QString &paymentNo) {
            const QString status = statusOf(withTrade.orderNo);
            std::lock_guard guard(mutex);
            statusAtClose.append(paymentNo + u' ' + status);
        });
        OrderCloser c = closer();
        auto run = c.runOnce(m_stack.clock.nowMs());
        m_platform.setOnClose({});
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        QCOMPARE(run.value().closed, 2);
        QCOMPARE(run.value().settled, 0);
        QCOMPARE(run.value().left, 0);
        QCOMPARE(statusAtClose, QStringList{withTrade.paymentNo + QStringLiteral(" PENDING")});
        verifyClosedOnce(withTrade, 0);
        verifyClosedOnce(neverConfirmed, 0);
        QCOMPARE(text(QStringLiteral("SELECT reason FROM audit_log WHERE action = 'order.close' AND target = ?"),
                      {QString(QStringLiteral("order:") + withTrade.orderNo)}),
                 QStringLiteral("not paid within 60 s"));
        QVERIFY(text(QStringLiteral("SELECT after_state FROM audit_log WHERE action = 'order.close' AND target = ?"),
                     {QString(QStringLiteral("order:") + withTrade.orderNo)})
                    .contains(withTrade.paymentNo));
        // The young one is not past the timeout: not closed at the platform, not touched.
        QVERIFY(!m_platform.calls().contains(QStringLiteral("close ") + young.paymentNo));
        QCOMPARE(statusOf(young.orderNo), QStringLiteral("PENDING"));
        QCOMPARE(text(QStringLiteral("SELECT status FROM payment_records WHERE order_no = ?"), {young.orderNo}),
                 QStringLiteral("failed"));

        // A second run finds nothing more to do, and closes nothing twice.
        auto again = c.runOnce(m_stack.clock.nowMs());
        QVERIFY(again.ok());
        QCOMPARE(again.value().closed, 0);
        QCOMPARE(closeAudits(withTrade.orderNo), qint64(1));
        QCOMPARE(m_platform.calls().count(QStringLiteral("close ") + withTrade.paymentNo), 1);
        exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {young.orderNo});
    }

    void aTradePaidBeforeTheCloseIsPaidOnceNotClosed()
    {
        // The user pays just before the close reaches the platform: close → Conflict, query → Paid.
        const Pending p = pendingOrder(kTimeoutMs + 5000, QStringLiteral("failed"),
                                       {GatewayTradeState::NotPaid, {}, true, false, false});
        OrderCloser c = closer();
        auto run = c.runOnce(m_stack.clock.nowMs());
        QVERIFY(run.ok());
        QCOMPARE(run.value().settled, 1);
        QCOMPARE(run.value().closed, 0);
        const auto outcome = outcomeFor(run.value(), p.orderNo);
        QVERIFY(outcome);
        QCOMPARE(outcome->action, QStringLiteral("settled"));
        const QStringList calls = m_platform.calls();
        QVERIFY(calls.indexOf(QStringLiteral("query ") + p.paymentNo)
                > calls.indexOf(QStringLiteral("close ") + p.paymentNo));

        verifyPaidOnce(p);
        QCOMPARE(count(QStringLiteral(
                           "SELECT COUNT(*) FROM audit_log WHERE action = 'order.close_found_paid' AND target = ?"),
                       {QString(QStringLiteral("order:") + p.orderNo)}),
                 qint64(1));

        // The platform's callback, late: acknowledged, nothing written twice.
        const CallbackOutcome late = m_stack.pipeline->handle(jsonDelivery(p.payNo, p.paymentNo, kAmount));
        QVERIFY2(late.success(), qPrintable(late.note + u' ' + late.message));
        QVERIFY2(late.note != QLatin1String("processed"), qPrintable(late.note));
        verifyPaidOnce(p);
        // And the next close run leaves a PAID order alone.
        auto again = c.runOnce(m_stack.clock.nowMs());
        QVERIFY(again.ok());
        QVERIFY(!outcomeFor(again.value(), p.orderNo));
        verifyPaidOnce(p);
    }

    void anUnclearAnswerLeavesTheOrderPending()
    {
        const Pending timesOut = pendingOrder(kTimeoutMs + 5000, QStringLiteral("pending"),
                                              {GatewayTradeState::NotPaid, {}, false, false, true});
        // Another channel, which this closer has no gateway for.
        const Pending noGateway = pendingOrder(kTimeoutMs + 5000, QString());
        const QString alipayNo = QStringLiteral("PNALI") + QString::number(++m_serial);
        QVERIFY(exec(
            QStringLiteral("INSERT INTO payment_records (payment_no, order_no, channel, status, attempt, amount_fen, "
                           "created_at, updated_at) VALUES (?, ?, 'alipay', 'failed', 1, ?, 1, 1)"),
            {alipayNo, noGateway.orderNo, kAmount}));
        // Paid and durable, but not processed yet (the worker's): not to be closed.
        const Pending waiting = pendingOrder(kTimeoutMs + 5000, QString());
        auto accepted = m_stack.callbackStore->insertAccepted(
            AcceptedCallback{Channel::WeChat, waiting.payNo, waiting.orderNo, kAmount, std::nullopt,
                             m_stack.clock.nowMs(), waiting.paymentNo});
        QVERIFY(accepted.ok());

        OrderCloser c = closer();
        auto run = c.runOnce(m_stack.clock.nowMs());
        QVERIFY(run.ok());
        QCOMPARE(run.value().left, 3);
        QCOMPARE(run.value().closed, 0);
        QVERIFY(outcomeFor(run.value(), timesOut.orderNo)->why.contains(QStringLiteral("platform timeout")));
        QVERIFY(outcomeFor(run.value(), noGateway.orderNo)->why.contains(QStringLiteral("no alipay gateway")));
        QVERIFY(outcomeFor(run.value(), waiting.orderNo)->why.contains(QStringLiteral("accepted")));
        for (const Pending &p : {timesOut, noGateway, waiting}) {
            QCOMPARE(statusOf(p.orderNo), QStringLiteral("PENDING"));
            QCOMPARE(closeAudits(p.orderNo), qint64(0));
        }
        QCOMPARE(text(QStringLiteral("SELECT status FROM payment_records WHERE order_no = ?"), {timesOut.orderNo}),
                 QStringLiteral("pending"));

        // Accept-only mode: nothing is closed, the platform is not even asked.
        m_platform.set(timesOut.paymentNo, {GatewayTradeState::NotPaid, timesOut.payNo, false, false, false});
        QVERIFY(m_stack.setCallbackMode(CallbackMode::AcceptOnly, QStringLiteral("drill")));
        const qsizetype callsBefore = m_platform.calls().size();
        auto acceptOnly = c.runOnce(m_stack.clock.nowMs());
        QVERIFY(m_stack.setCallbackMode(CallbackMode::Normal, QStringLiteral("drill over")));
        QVERIFY(acceptOnly.ok());
        QVERIFY(acceptOnly.value().acceptOnly);
        QCOMPARE(acceptOnly.value().closed, 0);
        QCOMPARE(m_platform.calls().size(), callsBefore);
        QCOMPARE(statusOf(timesOut.orderNo), QStringLiteral("PENDING"));

        // The platform answers again: the next run closes it.
        auto later = c.runOnce(m_stack.clock.nowMs());
        QVERIFY(later.ok());
        QCOMPARE(outcomeFor(later.value(), timesOut.orderNo)->action, QStringLiteral("closed"));
        verifyClosedOnce(timesOut, 0);
        for (const Pending &p : {noGateway, waiting})
            exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {p.orderNo});
    }

    void aPaymentAfterTheCloseIsADoublePaymentAndItsRefundIsProposed()
    {
        const Pending p = pendingOrder(kTimeoutMs + 5000, QStringLiteral("pending"));
        OrderCloser c = closer();
        auto run = c.runOnce(m_stack.clock.nowMs());
        QVERIFY(run.ok());
        QCOMPARE(outcomeFor(run.value(), p.orderNo)->action, QStringLiteral("closed"));
        // A success notification arrives for the CLOSED order (the lost race: paid at the
        // platform before the close, notified late): acknowledged, a double payment.
        const CallbackOutcome late = m_stack.pipeline->handle(jsonDelivery(p.payNo, p.paymentNo, kAmount));
        QVERIFY2(late.success(), qPrintable(late.note + u' ' + late.message));
        QCOMPARE(late.note, QStringLiteral("double_payment"));
        QCOMPARE(statusOf(p.orderNo), QStringLiteral("CLOSED"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {p.orderNo}), qint64(0));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {p.orderNo}), qint64(0));
        Patrol patrol(*m_stack.patrolStore, *m_stack.compensations, PatrolOptions{0, 0});
        auto found = patrol.runOnce(m_stack.clock.nowMs());
        QVERIFY(found.ok());
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                       {QString(QStringLiteral("wechat:") + p.payNo)}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE kind = 'refund' AND order_no = ? "
                                      "AND pay_no = ? AND amount_fen = ? AND status = 'proposed'"),
                       {p.orderNo, p.payNo, kAmount}),
                 qint64(1));
    }

    void manyClosersCloseEachOrderOnce()
    {
        constexpr int kOrders = 24;
        constexpr int kClosers = 6;
        QList<Pending> orders;
        for (int i = 0; i < kOrders; ++i)
            orders.append(pendingOrder(kTimeoutMs + 5000 + i, i % 3 == 0 ? QString() : QStringLiteral("pending")));
        std::atomic<int> closed{0};
        std::atomic<int> movedOn{0};
        std::mutex mutex;
        QStringList unexpected;
        runConcurrently(kClosers, [&](int) {
            OrderCloser c = closer(5); // small pages: the listing is paged while others close
            auto run = c.runOnce(m_stack.clock.nowMs());
            std::lock_guard guard(mutex);
            if (!run.ok()) {
                unexpected.append(run.error().internalMessage);
                return;
            }
            closed += run.value().closed;
            movedOn += run.value().movedOn;
            for (const auto &o : run.value().orders) {
                if (o.action != QLatin1String("closed") && o.action != QLatin1String("moved_on"))
                    unexpected.append(o.orderNo + u' ' + o.action + u' ' + o.why);
            }
        });
        qInfo("%d closers over %d expired orders on %s: %d closed, %d found them moved on", kClosers, kOrders,
              qPrintable(dialectName(dialectUnderTest())), closed.load(), movedOn.load());
        QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join(u'\n')));
        QCOMPARE(closed.load(), kOrders);
        for (const Pending &p : orders)
            verifyClosedOnce(p, 0);
    }
};

QTEST_GUILESS_MAIN(TestOrderClose)
#include "tst_orderclose.moc"
