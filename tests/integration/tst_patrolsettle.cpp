// The patrol's stuck_paying and stuck_accepted checks on a real migrated
// database of the dialect under test, with the real callback pipeline and the embedded
// key store. The platform is a fake here (what its query and close answer is the input of
// these cases); the same path against payonce-sim and the real agent is tst_patrolpath.
// The race: orders stuck in PAYING and paid at the platform are settled by two patrols
// while late callbacks for the same payments arrive on eight threads; every order must be
// PAID by exactly one of them, with every effect written once.

#include "auditrefusal.h"
#include "settlementstack.h"

#include "core/callback/callbackpipeline.h"
#include "core/callback/callbackworker.h"
#include "core/ports/clock.h"
#include "core/ports/notificationverifier.h"
#include "core/ports/paymentgateway.h"
#include "core/settlement/compensationservice.h"
#include "core/settlement/patrol.h"
#include "redis/embeddedkeystore.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlcallbackstore.h"
#include "sql/sqlcompensationstore.h"
#include "sql/sqlfenceepochsource.h"
#include "sql/sqlorders.h"
#include "sql/sqlpatrolstore.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

using namespace payonce;
using namespace payonce::core;
using namespace payonce::testsupport;
using namespace std::chrono_literals;

namespace {

constexpr qint64 kUser = 20240;
constexpr qint64 kAmount = 12800;
constexpr qint64 kStuckAfterMs = 60 * 1000;
const QString kMchId = QStringLiteral("1900000001");

RawDelivery deliveryOf(const QString &payNo, const QString &paymentNo)
{
    return jsonDelivery(payNo, paymentNo, kAmount);
}

QString evidenceAction(const StoredFinding &finding)
{
    return finding.evidence.value(QStringLiteral("action")).toString();
}

} // namespace

class TestPatrolSettle : public QObject {
    Q_OBJECT
private:
    SettlementStack m_stack;
    FakePlatform m_platform{kAmount};
    int m_serial = 0;

    sql::Database &db() { return m_stack.database(); }
    qint64 count(const QString &sql, const QVariantList &binds = {}) { return m_stack.count(sql, binds); }
    QString text(const QString &sql, const QVariantList &binds) { return m_stack.text(sql, binds); }
    void exec(const QString &sql, const QVariantList &binds = {}) { QVERIFY(m_stack.exec(sql, binds)); }

    struct Stuck {
        QString orderNo;
        QString paymentNo;
        QString payNo;
        QString skuId;
    };

    /// An order in PAYING for `ageMs`, its wechat attempt pending at the platform.
    Stuck stuckOrder(qint64 ageMs, FakePlatform::Trade trade)
    {
        Stuck s;
        const QString serial = QString::number(++m_serial);
        const QString now = QString::number(QDateTime::currentMSecsSinceEpoch());
        s.orderNo = QStringLiteral("ORD-STUCK-") + serial + u'-' + now;
        s.paymentNo = QStringLiteral("PNSTUCK") + serial + u'X' + now;
        s.payNo = QStringLiteral("4200") + serial + u'X' + now;
        s.skuId = QStringLiteral("SKU-") + s.orderNo;
        exec(QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, 10, 1)"), {s.skuId});
        createOrder(db(), rewardedOrder(s.orderNo, kUser, kAmount, s.skuId, 2));
        const qint64 since = QDateTime::currentMSecsSinceEpoch() - ageMs;
        exec(QStringLiteral("UPDATE orders SET status = 'PAYING', updated_at = ? WHERE order_no = ?"),
             {since, s.orderNo});
        exec(QStringLiteral(
                 "INSERT INTO payment_records (payment_no, order_no, channel, status, attempt, amount_fen, "
                 "code_url, created_at, updated_at) VALUES (?, ?, 'wechat', 'pending', 1, ?, 'weixin://x', ?, ?)"),
             {s.paymentNo, s.orderNo, kAmount, since, since});
        if (trade.state == GatewayTradeState::Paid && trade.payNo.isEmpty())
            trade.payNo = s.payNo;
        m_platform.set(s.paymentNo, trade);
        return s;
    }

    Patrol patrol(PatrolOptions options = {kStuckAfterMs, kStuckAfterMs})
    {
        PatrolSettlement settlement;
        settlement.gateways = [this](Channel channel) -> PaymentGateway * {
            return channel == Channel::WeChat ? &m_platform : nullptr;
        };
        settlement.callbacks = m_stack.pipeline.get();
        settlement.modes = m_stack.modes.get();
        settlement.audit = m_stack.audit.get();
        return Patrol(*m_stack.patrolStore, *m_stack.compensations, options, settlement);
    }

    std::optional<StoredFinding> findingFor(const QList<StoredFinding> &found, const QString &kind,
                                            const QString &subject)
    {
        for (const StoredFinding &f : found) {
            if (f.kind == kind && f.subject == subject)
                return f;
        }
        return std::nullopt;
    }

    /// The stuck_paying finding of order s among `found`.
    std::optional<StoredFinding> stuckPayingFinding(const QList<StoredFinding> &found, const Stuck &s)
    {
        return findingFor(found, QStringLiteral("stuck_paying"), QStringLiteral("order:") + s.orderNo);
    }

    /// Every effect of a paid order exactly once, and the stock taken once.
    void verifyPaidOnce(const Stuck &s)
    {
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {s.orderNo}),
                 QStringLiteral("PAID"));
        QCOMPARE(text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {s.orderNo}), s.payNo);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {s.orderNo}), qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), {s.orderNo}), qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), {s.orderNo}), qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {s.orderNo}), qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {s.skuId}), QStringLiteral("8"));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                  {s.payNo}),
            qint64(1));
        QCOMPARE(text(QStringLiteral("SELECT status FROM payment_records WHERE payment_no = ?"), {s.paymentNo}),
                 QStringLiteral("paid"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_stack.start(dialectUnderTest(), kMchId, &error), qPrintable(error));
    }

    void aPaidStuckOrderIsFinishedOnceAndALateCallbackChangesNothing()
    {
        const Stuck s = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::Paid, {}, false, false});
        const Stuck young = stuckOrder(1000, {GatewayTradeState::Paid, {}, false, false});
        Patrol p = patrol();
        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        const auto finding = stuckPayingFinding(run.value(), s);
        QVERIFY(finding);
        QCOMPARE(evidenceAction(*finding), QStringLiteral("finished"));
        QCOMPARE(finding->payNo, s.payNo);
        QCOMPARE(finding->evidence.value(QStringLiteral("outcome")).toString(), QStringLiteral("processed"));
        verifyPaidOnce(s);
        // The young one is not past the threshold: not asked, not touched.
        QVERIFY(!m_platform.calls().contains(QStringLiteral("query ") + young.paymentNo));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {young.orderNo}),
                 QStringLiteral("PAYING"));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'patrol.finish_paying' AND target = ? "
                                 "AND actor = 'system:patrol'"),
                  {QString(QStringLiteral("order:") + s.orderNo)}),
            qint64(1));

        // The platform's callback, late: acknowledged, nothing written twice.
        const CallbackOutcome late = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        QVERIFY2(late.success(), qPrintable(late.note + u' ' + late.message));
        QVERIFY2(late.note != QLatin1String("processed"), qPrintable(late.note));
        verifyPaidOnce(s);

        // The next run finds nothing stuck: the finding is resolved.
        auto again = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(again.ok());
        QVERIFY(!stuckPayingFinding(again.value(), s));
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE kind = 'stuck_paying' AND subject = ?"),
                      {QString(QStringLiteral("order:") + s.orderNo)}),
                 QStringLiteral("resolved"));
        exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {young.orderNo});
    }

    void twoPatrolsAndLateCallbacksPayEachOrderOnce()
    {
        constexpr int kOrders = 12;
        constexpr int kCallbackThreads = 8;
        QList<Stuck> orders;
        for (int i = 0; i < kOrders; ++i)
            orders.append(stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::Paid, {}, false, false}));
        // A platform that answers in 1–3 ms keeps the patrols inside the callbacks' window.
        m_platform.setQueryDelay(1ms);

        std::mutex mutex;
        std::map<QString, int> processedBy; // order_no → transitions made (patrol "finished" or callback "processed")
        std::map<QString, int> tally;
        QStringList unexpected;
        runConcurrently(2 + kCallbackThreads, [&](int thread) {
            if (thread < 2) {
                Patrol p = patrol();
                auto run = p.runOnce(m_stack.clock.nowMs());
                std::lock_guard guard(mutex);
                if (!run.ok()) {
                    unexpected.append(QStringLiteral("patrol failed: ") + run.error().internalMessage);
                    return;
                }
                for (const StoredFinding &f : run.value()) {
                    if (f.kind != QLatin1String("stuck_paying"))
                        continue;
                    ++tally[QStringLiteral("patrol ") + evidenceAction(f)];
                    if (evidenceAction(f) == QLatin1String("left"))
                        ++tally[QStringLiteral("patrol left: ") + f.evidence.value(QStringLiteral("why")).toString()];
                    if (evidenceAction(f) == QLatin1String("finished"))
                        ++processedBy[f.orderNo];
                }
                return;
            }
            // Each callback thread delivers every order's notification, in its own order.
            // Late, arriving while the patrols work through the list (60–100 ms here).
            std::this_thread::sleep_for(std::chrono::milliseconds(QRandomGenerator::global()->bounded(0, 80)));
            QList<Stuck> mine = orders;
            std::shuffle(mine.begin(), mine.end(), *QRandomGenerator::global());
            for (const Stuck &s : mine) {
                std::this_thread::sleep_for(std::chrono::milliseconds(QRandomGenerator::global()->bounded(0, 12)));
                CallbackOutcome out;
                for (int attempt = 0; attempt < 100; ++attempt) { // the platform retries until SUCCESS
                    out = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
                    if (out.code != CallbackOutcomeCode::Unavailable)
                        break;
                    std::this_thread::sleep_for(10ms);
                }
                std::lock_guard guard(mutex);
                ++tally[QStringLiteral("callback ") + out.note];
                if (!out.success())
                    unexpected.append(s.orderNo + QStringLiteral(": ") + out.note + u' ' + out.message);
                if (out.note == QLatin1String("processed"))
                    ++processedBy[s.orderNo];
            }
        });
        m_platform.setQueryDelay(0ms);

        QString printed;
        for (const auto &[label, n] : tally)
            printed += QStringLiteral("  %1: %2\n").arg(label).arg(n);
        qInfo().noquote() << "2 patrols and" << kCallbackThreads << "callback threads over" << kOrders
                          << "stuck orders on" << dialectName(dialectUnderTest()) << ":\n"
                          << printed;
        QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join(u'\n')));
        for (const Stuck &s : orders) {
            // Exactly one actor made PAYING → PAID, and it says so.
            QCOMPARE(processedBy[s.orderNo], 1);
            verifyPaidOnce(s);
        }
        const qint64 finishedByPatrol = count(
            QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'patrol.finish_paying' "
                           "AND target LIKE 'order:ORD-STUCK-%'"));
        qInfo("  finished by a patrol (audit rows, all cases so far): %lld", finishedByPatrol);
    }

    void anUnpaidStuckOrderIsClosedAtThePlatformThenReverted()
    {
        const Stuck s = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::NotPaid, {}, false, false});
        Patrol p = patrol();
        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(run.ok());
        const auto finding = stuckPayingFinding(run.value(), s);
        QVERIFY(finding);
        QCOMPARE(evidenceAction(*finding), QStringLiteral("reverted"));
        // Closed before the revert: nothing can be paid for it afterwards.
        const QStringList calls = m_platform.calls();
        QVERIFY(calls.indexOf(QStringLiteral("close ") + s.paymentNo)
                > calls.indexOf(QStringLiteral("query ") + s.paymentNo));
        QCOMPARE(int(m_platform.trade(s.paymentNo).state), int(GatewayTradeState::Closed));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {s.orderNo}),
                 QStringLiteral("PENDING"));
        // The attempt failed under a fresh payment_no, so the next confirm creates a new trade.
        const QString renumbered = text(QStringLiteral("SELECT payment_no FROM payment_records WHERE order_no = ?"),
                                        {s.orderNo});
        QVERIFY(renumbered.startsWith(QStringLiteral("PN")));
        QVERIFY(renumbered != s.paymentNo);
        const QJsonArray renumberings = finding->evidence.value(QStringLiteral("renumbered")).toArray();
        QCOMPARE(renumberings.size(), 1);
        QCOMPARE(renumberings.at(0).toObject().value(QStringLiteral("to")).toString(), renumbered);
        QCOMPARE(text(QStringLiteral("SELECT status FROM payment_records WHERE order_no = ?"), {s.orderNo}),
                 QStringLiteral("failed"));
        QVERIFY(text(QStringLiteral("SELECT last_error FROM payment_records WHERE order_no = ?"), {s.orderNo})
                    .contains(QStringLiteral("closed at the platform by the patrol")));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'patrol.revert_paying' AND target = ?"),
                  {QString(QStringLiteral("order:") + s.orderNo)}),
            qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {s.orderNo}), qint64(0));
        exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {s.orderNo});
    }

    // The patrol's finish and revert commit with their audit rows: with the row refused by
    // the database, the order is as it was (PAYING, nothing taken, the attempt under its
    // own number); once rows are written again, the next run does it, audited once.
    void finishAndRevertCommitWithTheirAuditRows()
    {
        const Stuck paid = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::Paid, {}, false, false});
        const Stuck unpaid = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::NotPaid, {}, false, false});
        Patrol p = patrol();
        const qint64 auditBefore = count(QStringLiteral("SELECT COUNT(*) FROM audit_log"));
        {
            auto refused = refuseAuditRows(
                db(), {QStringLiteral("patrol.finish_paying"), QStringLiteral("patrol.revert_paying")});
            QVERIFY2(refused.ok(), refused.ok() ? "" : qPrintable(refused.error().internalMessage));
            auto run = p.runOnce(m_stack.clock.nowMs());
            auto allowed = allowAuditRows(db());
            QVERIFY2(allowed.ok(), allowed.ok() ? "" : qPrintable(allowed.error().internalMessage));
            QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        }
        for (const Stuck &s : {paid, unpaid}) {
            QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {s.orderNo}),
                     QStringLiteral("PAYING"));
            QCOMPARE(text(QStringLiteral("SELECT payment_no FROM payment_records WHERE order_no = ?"), {s.orderNo}),
                     s.paymentNo);
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {s.orderNo}),
                     qint64(0));
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), {s.orderNo}),
                     qint64(0));
        }
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log")), auditBefore);

        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        verifyPaidOnce(paid);
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {unpaid.orderNo}),
                 QStringLiteral("PENDING"));
        for (const auto &[action, s] :
             {std::pair{"patrol.finish_paying", paid}, std::pair{"patrol.revert_paying", unpaid}})
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = ? AND target = ?"),
                           {QString::fromLatin1(action), QString(QStringLiteral("order:") + s.orderNo)}),
                     qint64(1));
        exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {unpaid.orderNo});
    }

    void aTradePaidBetweenQueryAndCloseIsFinished()
    {
        const Stuck s = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::NotPaid, {}, true, false});
        m_platform.set(s.paymentNo, {GatewayTradeState::NotPaid, s.payNo, true, false});
        Patrol p = patrol();
        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(run.ok());
        const auto finding = stuckPayingFinding(run.value(), s);
        QVERIFY(finding);
        QCOMPARE(evidenceAction(*finding), QStringLiteral("finished"));
        verifyPaidOnce(s);
    }

    void anUnclearAnswerLeavesTheOrderAsItIs()
    {
        const Stuck s = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::NotPaid, {}, false, true});
        Patrol p = patrol();
        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(run.ok());
        const auto finding = stuckPayingFinding(run.value(), s);
        QVERIFY(finding);
        QCOMPARE(evidenceAction(*finding), QStringLiteral("left"));
        QVERIFY2(finding->evidence.value(QStringLiteral("why")).toString().contains(QStringLiteral("query failed")),
                 qPrintable(finding->evidence.value(QStringLiteral("why")).toString()));
        QVERIFY(!m_platform.calls().contains(QStringLiteral("close ") + s.paymentNo));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {s.orderNo}),
                 QStringLiteral("PAYING"));
        QCOMPARE(text(QStringLiteral("SELECT payment_no FROM payment_records WHERE order_no = ?"), {s.orderNo}),
                 s.paymentNo);

        // Still stuck on the next run: the same finding, seen twice.
        auto again = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(again.ok());
        const auto seenAgain = stuckPayingFinding(again.value(), s);
        QVERIFY(seenAgain);
        QCOMPARE(seenAgain->id, finding->id);
        QCOMPARE(seenAgain->seenCount, qint64(2));
        exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {s.orderNo});
    }

    void acceptOnlyModeActsOnNothing()
    {
        const Stuck s = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::Paid, {}, false, false});
        QVERIFY(m_stack.setCallbackMode(CallbackMode::AcceptOnly, QStringLiteral("incident drill")));
        Patrol p = patrol();
        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(m_stack.setCallbackMode(CallbackMode::Normal, QStringLiteral("drill over")));
        QVERIFY(run.ok());
        const auto finding = stuckPayingFinding(run.value(), s);
        QVERIFY(finding);
        QCOMPARE(evidenceAction(*finding), QStringLiteral("left"));
        QVERIFY(!m_platform.calls().contains(QStringLiteral("query ") + s.paymentNo));
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {s.orderNo}),
                 QStringLiteral("PAYING"));

        // Back to normal: the next run settles it.
        auto again = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(again.ok());
        const auto settled = stuckPayingFinding(again.value(), s);
        QVERIFY(settled);
        QCOMPARE(evidenceAction(*settled), QStringLiteral("finished"));
        verifyPaidOnce(s);
    }

    void aSecondPaymentIsADoublePaymentAndItsRefundIsProposedOnce()
    {
        const Stuck s = stuckOrder(1000, {GatewayTradeState::Paid, {}, false, false});
        const CallbackOutcome first = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        QCOMPARE(first.note, QStringLiteral("processed"));
        // The user paid twice: a second pay_no for the same out_trade_no.
        const QString second = QStringLiteral("SECOND") + s.payNo;
        const CallbackOutcome twice = m_stack.pipeline->handle(deliveryOf(second, s.paymentNo));
        QVERIFY2(twice.success() && twice.note == QLatin1String("double_payment"), qPrintable(twice.note));
        // A payment logged for a CLOSED order by a path that bypassed the CAS, and one whose
        // amount is not the order's.
        const Stuck closed = stuckOrder(1000, {GatewayTradeState::NotPaid, {}, false, false});
        exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {closed.orderNo});
        // (on the channel of its own payment record: a refund is proposed against that record)
        exec(QStringLiteral("INSERT INTO pay_callback_log (channel, pay_no, order_no, amount_fen, status, created_at) "
                            "VALUES ('wechat', ?, ?, ?, 'processed', 1)"),
             {closed.payNo, closed.orderNo, kAmount});
        const Stuck odd = stuckOrder(1000, {GatewayTradeState::NotPaid, {}, false, false});
        exec(QStringLiteral("UPDATE orders SET status = 'PAID', pay_no = ? WHERE order_no = ?"),
             {odd.payNo, odd.orderNo});
        exec(QStringLiteral("INSERT INTO pay_callback_log (channel, pay_no, order_no, amount_fen, status, created_at) "
                            "VALUES ('wechat', ?, ?, 1, 'processed', 1)"),
             {odd.payNo, odd.orderNo});

        Patrol p = patrol();
        for (int run = 1; run <= 2; ++run) {
            auto found = p.runOnce(m_stack.clock.nowMs());
            QVERIFY2(found.ok(), qPrintable(found.ok() ? QString() : found.error().internalMessage));
            const auto doubled = findingFor(found.value(), QStringLiteral("double_payment"),
                                            QStringLiteral("wechat:") + second);
            QVERIFY(doubled);
            QCOMPARE(doubled->evidence.value(QStringLiteral("paid_pay_no")).toString(), s.payNo);
            // Raised by the callback path first, then seen again by every run.
            QCOMPARE(doubled->seenCount, qint64(1 + run));
            const auto afterClose = findingFor(found.value(), QStringLiteral("double_payment"),
                                               QStringLiteral("wechat:") + closed.payNo);
            QVERIFY(afterClose);
            QCOMPARE(afterClose->evidence.value(QStringLiteral("order_status")).toString(), QStringLiteral("CLOSED"));
            const auto mismatch = findingFor(found.value(), QStringLiteral("amount_mismatch"),
                                             QStringLiteral("wechat:") + odd.payNo);
            QVERIFY(mismatch);
            QVERIFY(
                !findingFor(found.value(), QStringLiteral("double_payment"), QStringLiteral("wechat:") + odd.payNo));
            QVERIFY(!findingFor(found.value(), QStringLiteral("double_payment"), QStringLiteral("wechat:") + s.payNo));

            // One refund proposal per extra payment, for that payment and its amount, however many runs.
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE kind = 'refund' AND order_no = ? "
                                          "AND pay_no = ? AND amount_fen = ? AND status = 'proposed' "
                                          "AND proposed_by = 'system:patrol' AND finding_id = ?"),
                           {s.orderNo, second, kAmount, doubled->id}),
                     qint64(1));
            QCOMPARE(
                count(QStringLiteral(
                          "SELECT COUNT(*) FROM compensations WHERE kind = 'refund' AND order_no = ? AND pay_no = ?"),
                      {closed.orderNo, closed.payNo}),
                qint64(1));
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE order_no = ?"), {odd.orderNo}),
                     qint64(0));
        }
        exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"), {odd.orderNo});
    }

    /// The pay lock of `payNo`, held as another agent would hold it (30 s lease).
    std::unique_ptr<LockHandle> holdPayLock(const Stuck &s)
    {
        auto held = m_stack.keys->locks().acquire(QStringLiteral("lock:pay:") + s.payNo, 30s, s.orderNo);
        if (!held.ok() || !held.value())
            qWarning() << "pay lock not taken for" << s.payNo;
        return held.ok() ? std::move(held).value() : nullptr;
    }

    /// The patrol's query confirms the payment while another holder has its lock: the log
    /// row is written (accepted, no delivery) and the order stays PAYING.
    void leaveARowWithoutADelivery(const Stuck &s)
    {
        auto lock = holdPayLock(s);
        QVERIFY(lock);
        Patrol p = patrol();
        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        (void)lock->release();
        QCOMPARE(text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {s.orderNo}),
                 QStringLiteral("PAYING"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'accepted' "
                                      "AND delivery_id IS NULL"),
                       {s.payNo}),
                 qint64(1));
    }

    // A row written from the platform's query has no delivery; the real notification that
    // follows is not a duplicate of anything processed: it becomes the row's delivery and
    // pays the order (it used to be acknowledged at the unique index, the order PAYING for good).
    void aRowWrittenByAQueryIsFinishedByTheRealNotification()
    {
        const Stuck s = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::Paid, {}, false, false});
        leaveARowWithoutADelivery(s);
        if (QTest::currentTestFailed())
            return;
        const CallbackOutcome real = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        QVERIFY2(real.success(), qPrintable(real.note + u' ' + real.message));
        QCOMPARE(real.note, QStringLiteral("processed"));
        verifyPaidOnce(s);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log l JOIN callback_deliveries d "
                                      "ON d.id = l.delivery_id WHERE l.pay_no = ? AND d.pay_no = l.pay_no"),
                       {s.payNo}),
                 qint64(1));
        // A copy after it is a plain duplicate.
        const CallbackOutcome copy = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        QVERIFY2(copy.success() && copy.note != QLatin1String("processed"), qPrintable(copy.note));
        verifyPaidOnce(s);
    }

    // The worker settles a row without a delivery through the platform's query instead of
    // skipping it for ever.
    void theWorkerFinishesARowWithoutADeliveryThroughAQuery()
    {
        const Stuck s = stuckOrder(kStuckAfterMs + 5000, {GatewayTradeState::Paid, {}, false, false});
        leaveARowWithoutADelivery(s);
        if (QTest::currentTestFailed())
            return;
        CallbackWorker worker(*m_stack.pipeline, *m_stack.callbackStore, *m_stack.modes, m_stack.clock, 0);
        worker.setGateways(
            [this](Channel channel) -> PaymentGateway * { return channel == Channel::WeChat ? &m_platform : nullptr; });
        const CallbackWorker::Report report = worker.runOnce(1000);
        QVERIFY2(report.finished >= 1,
                 qPrintable(QStringLiteral("finished %1 failed %2").arg(report.finished).arg(report.failed)));
        QVERIFY(m_platform.calls().contains(QStringLiteral("query ") + s.paymentNo));
        verifyPaidOnce(s);
    }

    // Whatever the order's status: a row without a delivery for a second payment of a PAID
    // order, on the other channel (written before payment_no was recorded, so its order's
    // payment record of that channel is queried) is settled as the double payment it is, and the first payment's effects stay once.
    void theWorkerSettlesARowWithoutADeliveryForAPaidOrderAsADoublePayment()
    {
        const Stuck s = stuckOrder(1000, {GatewayTradeState::Paid, {}, false, false});
        const CallbackOutcome first = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        QCOMPARE(first.note, QStringLiteral("processed"));
        const QString secondPaymentNo = s.paymentNo + QStringLiteral("B");
        const QString secondPayNo = QStringLiteral("SECOND") + s.payNo;
        exec(QStringLiteral("INSERT INTO payment_records (payment_no, order_no, channel, status, attempt, amount_fen, "
                            "code_url, created_at, updated_at) VALUES (?, ?, 'alipay', 'pending', 1, ?, "
                            "'https://qr.alipay/y', 1, 1)"),
             {secondPaymentNo, s.orderNo, kAmount});
        m_platform.set(secondPaymentNo, {GatewayTradeState::Paid, secondPayNo, false, false});
        auto inserted = m_stack.callbackStore->insertAccepted(AcceptedCallback{
            Channel::Alipay, secondPayNo, s.orderNo, kAmount, std::nullopt, m_stack.clock.nowMs(), {}});
        QVERIFY(inserted.ok());

        CallbackWorker worker(*m_stack.pipeline, *m_stack.callbackStore, *m_stack.modes, m_stack.clock, 0);
        worker.setGateways([this](Channel) -> PaymentGateway * { return &m_platform; });
        const CallbackWorker::Report report = worker.runOnce(1000);
        QVERIFY2(report.byQuery >= 1 && report.finished >= 1,
                 qPrintable(QStringLiteral("by query %1 finished %2 failed %3")
                                .arg(report.byQuery)
                                .arg(report.finished)
                                .arg(report.failed)));
        QVERIFY(m_platform.calls().contains(QStringLiteral("query ") + secondPaymentNo));
        QCOMPARE(text(QStringLiteral("SELECT outcome FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                      {secondPayNo}),
                 QStringLiteral("double_payment"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                       {QString(QStringLiteral("alipay:") + secondPayNo)}),
                 qint64(1));
        verifyPaidOnce(s);
    }

    // A row the worker could not take the lock for is not finished: it stays accepted and
    // is counted as not done, and the next run pays it.
    void theWorkerDoesNotCountABusyLockAsFinished()
    {
        const Stuck s = stuckOrder(1000, {GatewayTradeState::Paid, {}, false, false});
        QVERIFY(m_stack.setCallbackMode(CallbackMode::AcceptOnly, QStringLiteral("hold")));
        const CallbackOutcome accepted = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        QVERIFY(m_stack.setCallbackMode(CallbackMode::Normal, QStringLiteral("release")));
        QCOMPARE(accepted.note, QStringLiteral("accept_only"));
        CallbackWorker worker(*m_stack.pipeline, *m_stack.callbackStore, *m_stack.modes, m_stack.clock, 0);
        auto lock = holdPayLock(s);
        QVERIFY(lock);
        const CallbackWorker::Report busy = worker.runOnce(1000);
        (void)lock->release();
        QCOMPARE(busy.finished, 0);
        QVERIFY(busy.failed >= 1);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'accepted'"),
                       {s.payNo}),
                 qint64(1));
        const CallbackWorker::Report next = worker.runOnce(1000);
        QVERIFY2(next.finished >= 1,
                 qPrintable(QStringLiteral("finished %1 failed %2").arg(next.finished).arg(next.failed)));
        verifyPaidOnce(s);
    }

    // A copy of a notification whose log row another holder has locked (its paid
    // transaction open: paused before COMMIT, on another agent) is answered within a bound
    // the platform's ~5 s timeout allows, from the row's committed state — not when that
    // holder ends. SQLite has one writer per database: a write transaction held open blocks
    // every writer of the process, so the bound is for the server databases.
    void aDuplicateNeverWaitsOnAnotherHoldersOpenTransaction()
    {
        if (dialectUnderTest() == Dialect::Sqlite)
            QSKIP("SQLite: one writer per database; an open write transaction blocks every writer");
        const Stuck s = stuckOrder(1000, {GatewayTradeState::Paid, {}, false, false});
        QVERIFY(m_stack.setCallbackMode(CallbackMode::AcceptOnly, QStringLiteral("hold")));
        const CallbackOutcome first = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        QVERIFY(m_stack.setCallbackMode(CallbackMode::Normal, QStringLiteral("release")));
        QCOMPARE(first.note, QStringLiteral("accept_only"));

        constexpr auto kHeld = 8s;
        std::atomic<bool> holding{false};
        std::thread holder([&] {
            // The holder's transaction has the log row locked and is not committing.
            (void)db().write([&](sql::Session &session) -> Result<void> {
                auto locked = session.exec(QStringLiteral("UPDATE pay_callback_log SET outcome = 'held' "
                                                          "WHERE channel = 'wechat' AND pay_no = ?"),
                                           {s.payNo});
                if (!locked)
                    return locked.error();
                holding = true;
                std::this_thread::sleep_for(kHeld);
                return Error::make(ErrorCode::Internal, QStringLiteral("rolled back on purpose"));
            });
            holding = true;
        });
        while (!holding)
            std::this_thread::sleep_for(5ms);
        QElapsedTimer answered;
        answered.start();
        const CallbackOutcome copy = m_stack.pipeline->handle(deliveryOf(s.payNo, s.paymentNo));
        const qint64 waitedMs = answered.elapsed();
        holder.join();
        qInfo("the copy was answered after %lld ms (%s) while the row was held for %lld ms", waitedMs,
              qPrintable(copy.note), qint64(std::chrono::milliseconds(kHeld).count()));
        QVERIFY2(waitedMs < 4000, qPrintable(QStringLiteral("answered after %1 ms").arg(waitedMs)));
        // The row was durable (accepted, committed) before the holder locked it: SUCCESS.
        QVERIFY2(copy.success(), qPrintable(copy.note + u' ' + copy.message));
        QCOMPARE(copy.note, QStringLiteral("log_row_exists"));
        // Nothing is lost: the row is still accepted, and the worker finishes it.
        CallbackWorker worker(*m_stack.pipeline, *m_stack.callbackStore, *m_stack.modes, m_stack.clock, 0);
        const CallbackWorker::Report report = worker.runOnce(1000);
        QVERIFY(report.finished >= 1);
        verifyPaidOnce(s);
    }

    void anOldAcceptedRowIsAFindingUntilItIsProcessed()
    {
        const Stuck s = stuckOrder(1000, {GatewayTradeState::NotPaid, {}, false, false});
        const QString payNo = QStringLiteral("ACC") + s.payNo;
        auto inserted = m_stack.callbackStore->insertAccepted(AcceptedCallback{
            Channel::WeChat, payNo, s.orderNo, kAmount, std::nullopt, m_stack.clock.nowMs(), s.paymentNo});
        QVERIFY(inserted.ok());
        exec(QStringLiteral("UPDATE pay_callback_log SET created_at = ? WHERE pay_no = ?"),
             {m_stack.clock.nowMs() - kStuckAfterMs - 5000, payNo});
        Patrol p = patrol();
        auto run = p.runOnce(m_stack.clock.nowMs());
        QVERIFY2(run.ok(),
                 qPrintable(run.ok() ? QString() : run.error().internalMessage + u' ' + run.error().publicMessage));
        const auto finding = findingFor(run.value(), QStringLiteral("stuck_accepted"),
                                        QStringLiteral("wechat:") + payNo);
        QVERIFY(finding);
        QCOMPARE(finding->orderNo, s.orderNo);
        QCOMPARE(finding->evidence.value(QStringLiteral("has_delivery")).toBool(), false);
        QCOMPARE(finding->evidence.value(QStringLiteral("order_status")).toString(), QStringLiteral("PAYING"));

        exec(QStringLiteral("UPDATE pay_callback_log SET status = 'processed' WHERE pay_no = ?"), {payNo});
        auto again = p.runOnce(m_stack.clock.nowMs());
        QVERIFY(again.ok());
        QVERIFY(!findingFor(again.value(), QStringLiteral("stuck_accepted"), QStringLiteral("wechat:") + payNo));
        QCOMPARE(text(QStringLiteral("SELECT status FROM findings WHERE subject = ?"),
                      {QString(QStringLiteral("wechat:") + payNo)}),
                 QStringLiteral("resolved"));
    }
};

QTEST_GUILESS_MAIN(TestPatrolSettle)
#include "tst_patrolsettle.moc"
