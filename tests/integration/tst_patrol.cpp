// The reconciliation patrol and compensations with four-eyes approval, on a real
// migrated database of the dialect under test. A PAID order is set up with its correct
// effects by SQL; an extra coupon and extra points are then injected by raw SQL under
// other keys (a path that bypassed the keys). The slots run in order and share the state.

#include "storagefixture.h"

#include "core/settlement/compensationservice.h"
#include "core/settlement/patrol.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlcompensationstore.h"
#include "sql/sqlpatrolstore.h"

#include <QAtomicInt>
#include <QJsonArray>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

const QString kOrder = QStringLiteral("ORD-PATROL-1");
const QString kNoOutbox = QStringLiteral("ORD-PATROL-2");
const QString kTemplate = QStringLiteral("TPL-WELCOME");
const qint64 kUser = 10086;
const qint64 kPoints = 150;

} // namespace

class TestPatrol : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_db.start(), m_db.error());
        m_audit = std::make_unique<sql::SqlAuditWriter>(*m_db.database);
        m_compensationStore = std::make_unique<sql::SqlCompensationStore>(*m_db.database);
        m_patrolStore = std::make_unique<sql::SqlPatrolStore>(*m_db.database);
        m_compensations = std::make_unique<core::CompensationService>(*m_compensationStore, *m_audit);
        m_patrol = std::make_unique<core::Patrol>(*m_patrolStore, *m_compensations);

        for (const QString &order : {kOrder, kNoOutbox}) {
            exec(QStringLiteral("INSERT INTO orders (order_no, user_id, amount_fen, status, version, fence, pay_no, "
                                "paid_channel, reward_coupon_template, reward_points, created_at, updated_at, paid_at) "
                                "VALUES (?, ?, 1000, 'PAID', 2, 1, ?, 'wechat', ?, ?, 1, 1, 1)"),
                 {order, kUser, QString(QStringLiteral("PAY-") + order), kTemplate, kPoints});
            exec(QStringLiteral("INSERT INTO order_items (order_no, sku_id, qty) VALUES (?, 'SKU-A', 2)"), {order});
            exec(QStringLiteral(
                     "INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) VALUES (?, 'SKU-A', 2, 1, 1)"),
                 {order});
            exec(QStringLiteral("INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, created_at, "
                                "updated_at) VALUES (?, ?, ?, 'active', 1, 1, 1)"),
                 {order, kUser, kTemplate});
            exec(QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
                                "VALUES (?, ?, 'reward', ?, 1, 1)"),
                 {order, kUser, kPoints});
        }
        exec(QStringLiteral("INSERT INTO outbox (event_id, event_type, aggregate_id, payload, status, next_attempt_at, "
                            "created_at) VALUES (?, 'order.paid', ?, '{}', 'pending', 1, 1)"),
             {QString(QStringLiteral("order.paid:") + kOrder), kOrder});
    }

    void correctEffectsRaiseNothingButAMissingOutboxIsFound()
    {
        auto run = m_patrol->runOnce(1000);
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        QCOMPARE(run.value().size(), 1);
        const core::StoredFinding &f = run.value().first();
        QCOMPARE(f.kind, QStringLiteral("missing_outbox"));
        QCOMPARE(f.orderNo, kNoOutbox);
        QCOMPARE(f.status, QStringLiteral("open"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'effect_mismatch'")), qint64(0));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations")), qint64(0));
    }

    void injectedExtrasAreFoundAndProposed()
    {
        // Raw SQL under other keys: another template on the same order, another point_type.
        exec(QStringLiteral("INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, created_at, "
                            "updated_at) VALUES (?, ?, 'TPL-WELCOME-AGAIN', 'active', 1, 5, 5)"),
             {kOrder, kUser});
        exec(QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
                            "VALUES (?, ?, 'reward-replayed', ?, 1, 5)"),
             {kOrder, kUser, kPoints});
        m_extraCouponId = scalar(QStringLiteral("SELECT id FROM user_coupon WHERE template_id = 'TPL-WELCOME-AGAIN'"));
        QVERIFY(m_extraCouponId > 0);

        auto run = m_patrol->runOnce(2000);
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        const core::StoredFinding *mismatch = nullptr;
        for (const auto &f : run.value()) {
            if (f.kind == QStringLiteral("effect_mismatch"))
                mismatch = &f;
        }
        QVERIFY(mismatch);
        QCOMPARE(mismatch->orderNo, kOrder);
        QCOMPARE(mismatch->subject, QString(QStringLiteral("order:") + kOrder));
        QCOMPARE(mismatch->seenCount, qint64(1));
        const QJsonObject points = mismatch->evidence.value(QStringLiteral("points")).toObject();
        QCOMPARE(points.value(QStringLiteral("expected")).toInteger(), kPoints);
        QCOMPARE(points.value(QStringLiteral("found")).toInteger(), 2 * kPoints);
        const QJsonObject coupons = mismatch->evidence.value(QStringLiteral("coupons")).toObject();
        QCOMPARE(coupons.value(QStringLiteral("found")).toArray().size(), 2);
        QCOMPARE(coupons.value(QStringLiteral("extra_ids")).toArray(), QJsonArray{m_extraCouponId});
        QVERIFY(!mismatch->evidence.contains(QStringLiteral("stock")));
        m_findingId = mismatch->id;

        auto proposed = m_compensations->list(QStringLiteral("proposed"), 100);
        QVERIFY(proposed.ok());
        QCOMPARE(proposed.value().size(), 2);
        for (const core::Compensation &c : proposed.value()) {
            QCOMPARE(c.proposedBy, QStringLiteral("system:patrol"));
            QCOMPARE(c.orderNo, kOrder);
            QCOMPARE(c.findingId, std::optional<qint64>(m_findingId));
            if (c.kind == core::CompensationKind::FreezeCoupon)
                m_freezeId = c.id;
            else if (c.kind == core::CompensationKind::ReversePoints)
                m_reverseId = c.id;
        }
        QVERIFY(m_freezeId > 0);
        QVERIFY(m_reverseId > 0);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.propose' "
                                      "AND actor = 'system:patrol'")),
                 qint64(2));
    }

    void aSecondRunDoesNotDuplicate()
    {
        auto run = m_patrol->runOnce(3000);
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'effect_mismatch'")), qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE id = ? AND seen_count = 2 AND "
                                      "first_seen_at = 2000 AND last_seen_at = 3000 AND status = 'open'"),
                       {m_findingId}),
                 qint64(1));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'missing_outbox' AND seen_count = 3")),
            qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations")), qint64(2));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.propose'")),
                 qint64(2));
    }

    void theProposerCannotApprove()
    {
        auto refused = m_compensations->approve(m_freezeId, QStringLiteral("system:patrol"),
                                                QStringLiteral("looks right to me"), 3100);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, core::ErrorCode::FourEyes);
        QCOMPARE(core::errorCodeName(refused.error().code), QStringLiteral("four_eyes"));

        // An operator's own proposal, likewise; another approver rejects it.
        auto mine = m_compensations->propose({core::CompensationKind::RestoreStock,
                                              kOrder,
                                              std::nullopt,
                                              {},
                                              QStringLiteral("alice"),
                                              QStringLiteral("stock looked off"),
                                              {},
                                              {},
                                              {}},
                                             3200);
        QVERIFY2(mine.ok(), qPrintable(mine.ok() ? QString() : mine.error().internalMessage));
        QVERIFY(mine.value().created);
        auto self = m_compensations->approve(mine.value().compensation.id, QStringLiteral("alice"),
                                             QStringLiteral("me"), 3300);
        QVERIFY(!self.ok());
        QCOMPARE(self.error().code, core::ErrorCode::FourEyes);
        auto rejected = m_compensations->reject(mine.value().compensation.id, QStringLiteral("bob"),
                                                QStringLiteral("stock is right"), 3400);
        QVERIFY(rejected.ok());
        QVERIFY(rejected.value().decidedNow);
        QCOMPARE(rejected.value().compensation.status, QStringLiteral("rejected"));
        QCOMPARE(rejected.value().compensation.decidedBy, QStringLiteral("bob"));

        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'proposed'"),
                       {m_freezeId}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.approve'")),
                 qint64(0));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.reject' AND "
                                      "actor = 'bob' AND reason = 'stock is right'")),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.propose' AND "
                                      "actor = 'alice'")),
                 qint64(1));
    }

    void eightConcurrentApprovalsExecuteOnce()
    {
        QAtomicInt decided;
        QAtomicInt failed;
        runConcurrently(8, [&](int) {
            auto done = m_compensations->approve(m_freezeId, QStringLiteral("bob"), QStringLiteral("extra coupon"),
                                                 4000);
            if (!done.ok()) {
                failed.fetchAndAddRelaxed(1);
                qWarning("approve failed: %s", qPrintable(done.error().internalMessage));
                return;
            }
            if (done.value().decidedNow)
                decided.fetchAndAddRelaxed(1);
        });
        QCOMPARE(failed.loadRelaxed(), 0);
        QCOMPARE(decided.loadRelaxed(), 1);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'executed' AND "
                                      "decided_by = 'bob'"),
                       {m_freezeId}),
                 qint64(1));
        // Frozen, not deleted; the owed coupon stays active.
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE id = ? AND status = 'frozen'"),
                       {m_extraCouponId}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active' "
                                      "AND template_id = ?"),
                       {kOrder, kTemplate}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), {kOrder}), qint64(2));
        const QString target = QStringLiteral("compensation:%1").arg(m_freezeId);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.approve' AND "
                                      "target = ? AND actor = 'bob' AND reason = 'extra coupon'"),
                       {target}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.execute' AND "
                                      "target = ?"),
                       {target}),
                 qint64(1));
    }

    void approvingTwiceReversesPointsOnce()
    {
        for (int i = 0; i < 2; ++i) {
            auto done = m_compensations->approve(m_reverseId, QStringLiteral("carol"), QStringLiteral("extra points"),
                                                 4100 + i);
            QVERIFY2(done.ok(), qPrintable(done.ok() ? QString() : done.error().internalMessage));
            QCOMPARE(done.value().decidedNow, i == 0);
            QCOMPARE(done.value().compensation.status, QStringLiteral("executed"));
        }
        const QString reversal = QStringLiteral("reversal:%1").arg(m_reverseId);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ? AND point_type = ? AND "
                                      "delta = ?"),
                       {kOrder, reversal, -kPoints}),
                 qint64(1));
        QCOMPARE(scalar(QStringLiteral("SELECT SUM(delta) FROM point_log WHERE order_no = ?"), {kOrder}), kPoints);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), {kOrder}), qint64(3));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE action = 'compensation.execute' AND "
                                      "target = ? AND actor = 'carol'"),
                       {QStringLiteral("compensation:%1").arg(m_reverseId)}),
                 qint64(1));

        // Rejecting what is executed is a conflict, not a rewrite.
        auto late = m_compensations->reject(m_reverseId, QStringLiteral("dave"), QStringLiteral("too late"), 4200);
        QVERIFY(!late.ok());
        QCOMPARE(late.error().code, core::ErrorCode::Conflict);
    }

    void afterExecutionThePatrolResolvesTheFinding()
    {
        auto run = m_patrol->runOnce(5000);
        QVERIFY2(run.ok(), qPrintable(run.ok() ? QString() : run.error().internalMessage));
        for (const auto &f : run.value())
            QVERIFY2(f.kind != QStringLiteral("effect_mismatch"), qPrintable(f.subject));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE id = ? AND status = 'resolved' AND "
                                      "resolved_at = 5000"),
                       {m_findingId}),
                 qint64(1));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'missing_outbox' AND status = 'open'")),
            qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensations")), qint64(3));
        // Each step of the patrol's two compensations: propose, approve, execute.
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE target IN (?, ?)"),
                       {QStringLiteral("compensation:%1").arg(m_freezeId),
                        QStringLiteral("compensation:%1").arg(m_reverseId)}),
                 qint64(6));
    }

    void restoreStockGivesBackOnceAndKeepsTheLog()
    {
        // A CLOSED order that took stock (owed none): an operator proposes, another approves twice.
        const QString closed = QStringLiteral("ORD-PATROL-3");
        exec(QStringLiteral("INSERT INTO orders (order_no, user_id, amount_fen, status, version, fence, created_at, "
                            "updated_at, closed_at) VALUES (?, ?, 500, 'CLOSED', 3, 2, 1, 1, 1)"),
             {closed, kUser});
        exec(QStringLiteral("INSERT INTO order_items (order_no, sku_id, qty) VALUES (?, 'SKU-B', 3)"), {closed});
        exec(QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES ('SKU-B', 10, 1)"));
        exec(QStringLiteral(
                 "INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) VALUES (?, 'SKU-B', 3, 2, 1)"),
             {closed});
        auto proposed = m_compensations->propose({core::CompensationKind::RestoreStock,
                                                  closed,
                                                  std::nullopt,
                                                  {},
                                                  QStringLiteral("alice"),
                                                  QStringLiteral("closed order kept stock"),
                                                  {},
                                                  {},
                                                  {}},
                                                 6000);
        QVERIFY2(proposed.ok(), qPrintable(proposed.ok() ? QString() : proposed.error().internalMessage));
        const qint64 id = proposed.value().compensation.id;
        for (int i = 0; i < 2; ++i) {
            auto done = m_compensations->approve(id, QStringLiteral("bob"), QStringLiteral("give it back"), 6100 + i);
            QVERIFY2(done.ok(), qPrintable(done.ok() ? QString() : done.error().internalMessage));
            QCOMPARE(done.value().decidedNow, i == 0);
        }
        QCOMPARE(scalar(QStringLiteral("SELECT stock FROM skus WHERE sku_id = 'SKU-B'")), qint64(13));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND sku_id = 'SKU-B' AND qty = -3 "
                                 "AND entry_key = ? AND reason = 'restore_stock'"),
                  {closed, QStringLiteral("reversal:%1").arg(id)}),
            qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ? AND qty = 3"), {closed}),
                 qint64(1));
    }

private:
    void exec(const QString &statement, const QVariantList &binds = {})
    {
        auto done = m_db.database->write([&](sql::Session &s) -> core::Result<void> {
            auto q = s.exec(statement, binds);
            if (!q)
                return q.error();
            return {};
        });
        QVERIFY2(done.ok(), qPrintable(done.ok() ? QString() : done.error().internalMessage));
    }

    qint64 count(const QString &statement, const QVariantList &binds = {})
    {
        QString error;
        const qint64 n = countRows(*m_db.database, statement, binds, &error);
        if (n < 0)
            qWarning("%s", qPrintable(error));
        return n;
    }

    qint64 scalar(const QString &statement, const QVariantList &binds = {}) { return count(statement, binds); }

    MigratedDatabase m_db;
    std::unique_ptr<sql::SqlAuditWriter> m_audit;
    std::unique_ptr<sql::SqlCompensationStore> m_compensationStore;
    std::unique_ptr<sql::SqlPatrolStore> m_patrolStore;
    std::unique_ptr<core::CompensationService> m_compensations;
    std::unique_ptr<core::Patrol> m_patrol;
    qint64 m_extraCouponId = 0;
    qint64 m_findingId = 0;
    qint64 m_freezeId = 0;
    qint64 m_reverseId = 0;
};

QTEST_GUILESS_MAIN(TestPatrol)
#include "tst_patrol.moc"
