// Refunds on a real migrated database of the dialect under test: the approval
// records the refund (CompensationService over SqlCompensationStore), RefundService sends
// it to a fake platform (its answers are the input of these cases; the real clients
// against payonce-sim are tst_gateway_sim and tst_refundpath) and settles it through
// SqlRefundStore. Paid orders are set up by SQL with every effect they earned.

#include "storagefixture.h"

#include "core/compensationservice.h"
#include "core/patrol.h"
#include "core/ports/clock.h"
#include "core/ports/paymentgateway.h"
#include "core/refundservice.h"
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

/// The platform's refund API as these cases need it: the next answers queued per refund
/// number (default Processing), every call counted; refunds made are remembered by
/// number, so a repeated number answers the first refund.
class FakeRefundPlatform final : public PaymentGateway {
public:
    void queue(const QString &refundNo, Result<GatewayRefund> answer)
    {
        std::lock_guard guard(m_mutex);
        m_answers[refundNo].append(std::move(answer));
    }
    void setQuery(const QString &refundNo, GatewayRefundState state)
    {
        std::lock_guard guard(m_mutex);
        m_queried[refundNo] = state;
    }
    int refundCalls(const QString &refundNo)
    {
        std::lock_guard guard(m_mutex);
        return m_calls[refundNo];
    }
    GatewayRefundRequest lastRequest(const QString &refundNo)
    {
        std::lock_guard guard(m_mutex);
        return m_requests[refundNo];
    }

    Channel channel() const override { return Channel::WeChat; }
    Result<GatewayOrder> createOrder(const GatewayOrderRequest &) override { return unexpected(); }
    Result<GatewayTrade> query(const QString &) override { return unexpected(); }
    Result<void> close(const QString &) override { return unexpected(); }
    Result<GatewayRefund> refund(const GatewayRefundRequest &request) override
    {
        std::lock_guard guard(m_mutex);
        ++m_calls[request.refundNo];
        m_requests[request.refundNo] = request;
        QList<Result<GatewayRefund>> &answers = m_answers[request.refundNo];
        if (!answers.isEmpty())
            return answers.takeFirst();
        return made(request.refundNo, GatewayRefundState::Processing);
    }
    Result<GatewayRefund> queryRefund(const QString &, const QString &refundNo) override
    {
        std::lock_guard guard(m_mutex);
        const auto found = m_queried.find(refundNo);
        return made(refundNo, found == m_queried.end() ? GatewayRefundState::Processing : found->second);
    }

    static GatewayRefund made(const QString &refundNo, GatewayRefundState state)
    {
        GatewayRefund r;
        r.state = state;
        r.refundNo = refundNo;
        r.refundId = QStringLiteral("5030") + refundNo.right(8);
        return r;
    }

private:
    static Error unexpected() { return Error::make(ErrorCode::Internal, QStringLiteral("not a refund call")); }

    std::mutex m_mutex;
    std::map<QString, QList<Result<GatewayRefund>>> m_answers;
    std::map<QString, GatewayRefundState> m_queried;
    std::map<QString, int> m_calls;
    std::map<QString, GatewayRefundRequest> m_requests;
};

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
    FakeRefundPlatform m_platform;
    std::unique_ptr<sql::SqlAuditWriter> m_audit;
    std::unique_ptr<sql::SqlCompensationStore> m_compensationStore;
    std::unique_ptr<CompensationService> m_compensations;
    std::unique_ptr<sql::SqlRefundStore> m_refundStore;
    std::unique_ptr<RefundService> m_refunds;
    int m_serial = 0;

    sql::Database &db() { return *m_db.database; }

    qint64 count(const QString &sql, const QVariantList &binds = {})
    {
        QString error;
        const qint64 n = countRows(db(), sql, binds, &error);
        if (n < 0)
            qWarning() << "count failed:" << error;
        return n;
    }

    QString text(const QString &sql, const QVariantList &binds)
    {
        return firstValueText(db(), sql, binds);
    }

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
        const QString serial = QString::number(++m_serial) + u'X' + QString::number(QDateTime::currentMSecsSinceEpoch());
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

    std::optional<Compensation> approvedCompensation(CompensationKind kind, const QString &orderNo, QString *error = nullptr)
    {
        return approved({kind, orderNo, std::nullopt, {}, QStringLiteral("desk"), QStringLiteral("looks wrong"), {},
                         std::nullopt},
                        error);
    }

    /// Proposed by the desk, approved by the lead: the refund as recorded.
    std::optional<RefundRecord> approvedRefund(const QString &orderNo, const QString &payNo = {},
                                               std::optional<qint64> amountFen = std::nullopt, QString *error = nullptr)
    {
        const auto c = approved({CompensationKind::Refund, orderNo, std::nullopt, {}, QStringLiteral("desk"),
                                 QStringLiteral("customer asked"), payNo, amountFen},
                                error);
        if (!c)
            return std::nullopt;
        auto found = m_refundStore->find(c->result.value(QStringLiteral("refund_no")).toString());
        if (!found.ok() || !found.value())
            return std::nullopt;
        return *found.value();
    }

    QString stockOf(const QString &skuId) { return text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {skuId}); }

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
        return count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"), {orderNo});
    }

    void verifyRefundedOnce(const Paid &p, const QString &refundNo)
    {
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("REFUNDED"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"), {p.orderNo}),
                 qint64(0));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ? AND point_type = ? AND delta = ?"),
                       {p.orderNo, QString(QStringLiteral("refund:") + refundNo), -kPoints}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT SUM(delta) FROM point_log WHERE order_no = ?"), {p.orderNo}), QStringLiteral("0"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND sku_id = ? AND entry_key = ? "
                                      "AND reason = 'refund' AND qty = -2"),
                       {p.orderNo, p.skuId, QString(QStringLiteral("refund:") + refundNo)}),
                 qint64(1));
        QCOMPARE(netStockOf(p.orderNo, p.skuId), QStringLiteral("0"));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {p.skuId}), QStringLiteral("10"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_id = ?"),
                       {QString(QStringLiteral("order.refunded:") + p.orderNo)}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'refund.succeeded' AND target = ?"),
                       {QString(QStringLiteral("refund:") + refundNo)}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refundNo}), QStringLiteral("succeeded"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        m_db = MigratedDatabase::start(dialectUnderTest(), &error);
        QVERIFY2(m_db, qPrintable(error));
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
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("REFUNDING"));

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
        const GatewayRefundRequest request = m_platform.lastRequest(refund->refundNo);
        QCOMPARE(request.paymentNo, p.paymentNo);
        QCOMPARE(request.amountFen, kAmount);
        QCOMPARE(request.totalFen, kAmount);
        QCOMPARE(request.notifyUrl, QStringLiteral("http://agent/api/v1/callbacks/wechat/refund"));
        // Submitting again (an approval sent twice) sends nothing: it is with the platform.
        QVERIFY(m_refunds->submit(refund->refundNo).ok());
        QCOMPARE(m_platform.refundCalls(refund->refundNo), 1);

        std::mutex mutex;
        std::map<int, int> outcomes; // RefundSettlement → count
        QStringList failures;
        const RefundNotification n = notificationOf(*refund, RefundNotification::State::Success);
        runConcurrently(20, [&](int) {
            auto settled = m_refunds->settle(n);
            std::lock_guard guard(mutex);
            if (!settled.ok())
                failures.append(settled.error().internalMessage);
            else
                ++outcomes[int(settled.value())];
        });
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
        qInfo("20 notifications on %s: %d settled, %d already settled", qPrintable(dialectName(dialectUnderTest())),
              outcomes[int(RefundSettlement::Settled)], outcomes[int(RefundSettlement::AlreadySettled)]);
        QCOMPARE(outcomes[int(RefundSettlement::Settled)], 1);
        QCOMPARE(outcomes[int(RefundSettlement::AlreadySettled)], 19);
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
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE kind = 'double_payment' AND subject = ?"), {subject}),
                 QStringLiteral("open"));
        // Part of it first (the platform answers success at once, as Alipay does), then the rest.
        const auto first = approvedRefund(p.orderNo, extra, 3000);
        QVERIFY(first);
        QVERIFY(!first->ownPayment);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("PAID"));
        m_platform.queue(first->refundNo, FakeRefundPlatform::made(first->refundNo, GatewayRefundState::Success));
        auto sent = m_refunds->submit(first->refundNo);
        QVERIFY(sent.ok());
        QCOMPARE(sent.value().status, RefundStatus::Succeeded);
        QCOMPARE(m_platform.lastRequest(first->refundNo).payNo, extra);

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
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {p.orderNo}), p.payNo);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"), {p.orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {p.skuId}), QStringLiteral("8"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {p.orderNo}), qint64(0));
        QCOMPARE(text(QStringLiteral("SELECT SUM(amount_fen) FROM refunds WHERE pay_no = ? AND status = 'succeeded'"), {extra}),
                 QString::number(kAmount));
        // Given back in full: the next patrol run no longer finds it, and the finding resolves.
        QVERIFY(patrol.runOnce(m_clock.nowMs() + 1).ok());
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE kind = 'double_payment' AND subject = ?"), {subject}),
                 QStringLiteral("resolved"));
    }

    void theOrdersOwnPaymentIsRefundedWhole()
    {
        const Paid p = paidOrder();
        QString error;
        QVERIFY(!approvedRefund(p.orderNo, {}, kAmount - 1, &error));
        QVERIFY2(error.contains(u"whole"), qPrintable(error));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("PAID"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM refunds WHERE order_no = ?"), {p.orderNo}), qint64(0));
        // The approval rolled back with it: the proposal waits, undecided.
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE order_no = ? AND status = 'proposed'"),
                       {p.orderNo}),
                 qint64(1));
        QVERIFY(!approvedRefund(QStringLiteral("ORD-NOBODY"), {}, std::nullopt, &error));
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
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {refund->refundNo}),
                 QStringLiteral("failed"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_failed' AND subject = ? "
                                      "AND order_no = ? AND status = 'open'"),
                       {QString(QStringLiteral("refund:") + refund->refundNo), p.orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT status FROM compensations WHERE id = ?"), {refund->compensationId}),
                 QStringLiteral("failed"));
        // Nothing was undone.
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'"), {p.orderNo}),
                 qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {p.skuId}), QStringLiteral("8"));
        // A success arriving after the failure changes nothing.
        QCOMPARE(m_refunds->settle(notificationOf(*refund, RefundNotification::State::Success)).value(),
                 RefundSettlement::AlreadySettled);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("PAID"));

        // A refusal by the platform fails it the same way.
        const Paid q = paidOrder();
        const auto refused = approvedRefund(q.orderNo);
        QVERIFY(refused);
        m_platform.queue(refused->refundNo, Error::make(ErrorCode::Conflict, QStringLiteral("NOT_ENOUGH balance")));
        auto sent = m_refunds->submit(refused->refundNo);
        QVERIFY(sent.ok());
        QCOMPARE(sent.value().status, RefundStatus::Failed);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {q.orderNo}), QStringLiteral("PAID"));
    }

    void anUnknownOutcomeIsFollowedUpUnderTheSameNumber()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        m_platform.queue(refund->refundNo, Error::make(ErrorCode::Unavailable, QStringLiteral("timeout")));
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
        m_platform.setQuery(refund->refundNo, GatewayRefundState::Success);
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
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("REFUNDING"));
    }

    // ---- settlement regressions: each of these failed on the code before its fix ----

    void restoreStockAfterTheRefundGivesNothingBack()
    {
        const Paid p = paidOrder();
        const auto refund = approvedRefund(p.orderNo);
        QVERIFY(refund);
        m_platform.queue(refund->refundNo, FakeRefundPlatform::made(refund->refundNo, GatewayRefundState::Success));
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
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("REFUNDING"));
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
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("PAID"));
        QCOMPARE(activeCoupons(p.orderNo), qint64(1)); // 0 before the fix
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
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {p.orderNo}), QStringLiteral("REFUNDING"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_abnormal' AND subject = ? "
                                      "AND order_no = ? AND status = 'open' AND seen_count = 2"),
                       {subject, p.orderNo}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'refund_failed' AND subject = ?"), {subject}),
                 qint64(0));
        // Handled by hand at the platform: SUCCESS settles it, and the finding resolves.
        QCOMPARE(m_refunds->settle(notificationOf(*refund, RefundNotification::State::Success)).value(),
                 RefundSettlement::Settled);
        verifyRefundedOnce(p, refund->refundNo);
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE kind = 'refund_abnormal' AND subject = ?"), {subject}),
                 QStringLiteral("resolved"));
        // The same through the submission's own answer and the follow-up's query.
        const Paid q = paidOrder();
        const auto second = approvedRefund(q.orderNo);
        QVERIFY(second);
        m_platform.queue(second->refundNo, FakeRefundPlatform::made(second->refundNo, GatewayRefundState::Abnormal));
        auto sent = m_refunds->submit(second->refundNo);
        QVERIFY(sent.ok());
        QCOMPARE(sent.value().status, RefundStatus::Processing);
        m_platform.setQuery(second->refundNo, GatewayRefundState::Abnormal);
        QVERIFY(m_refunds->followUp(m_clock.nowMs() + 60000).ok());
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {second->refundNo}),
                 QStringLiteral("processing"));
        m_platform.setQuery(second->refundNo, GatewayRefundState::Closed);
        QVERIFY(m_refunds->followUp(m_clock.nowMs() + 120000).ok());
        QCOMPARE(text(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?"), {second->refundNo}),
                 QStringLiteral("failed"));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {q.orderNo}), QStringLiteral("PAID"));
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
                auto proposed = m_compensations->propose({CompensationKind::Refund, p.orderNo, std::nullopt, {},
                                                          QStringLiteral("desk"), QStringLiteral("paid twice"), extra,
                                                          kAmount * 6 / 10},
                                                         m_clock.nowMs());
                QVERIFY(proposed.ok());
                ids << proposed.value().compensation.id;
            }
            runConcurrently(2, [&](int i) {
                (void)m_compensations->approve(ids.at(i), QStringLiteral("lead") + QString::number(i),
                                               QStringLiteral("checked"), m_clock.nowMs());
            });
            const qint64 recorded = text(QStringLiteral("SELECT COALESCE(SUM(amount_fen), 0) FROM refunds WHERE pay_no = ?"),
                                         {extra})
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
