// Payment records and breaker modes in the database, once per dialect: 32 threads insert
// the record of one (order, channel) -> exactly one row; 32 threads reuse one failed
// record -> exactly one CAS wins; breaker modes round-trip through `settings`.

#include "storagefixture.h"

#include "sql/sqlbreakermodestore.h"
#include "sql/sqlorders.h"
#include "sql/sqlpaymentstore.h"

#include <QTest>

#include <functional>

using namespace payonce;
using namespace payonce::testsupport;
using core::Channel;
using core::PaymentRecord;
using core::PaymentRecordStatus;

namespace {
constexpr int kThreads = 32;
constexpr int kRounds = 10;

} // namespace

class TestPaymentStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_db.start(), m_db.error());
        m_store = std::make_unique<sql::SqlPaymentStore>(*m_db.database);
    }

    void recordInsertRace()
    {
        sql::SqlOrders orders(*m_db.database);
        for (int round = 0; round < kRounds; ++round) {
            const QString orderNo = QStringLiteral("ORD-REC-%1").arg(round);
            QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
            RaceTally inserted; // won: inserted; lost: the record was present
            runConcurrently(kThreads, [&](int i) {
                inserted.count(answerInTransaction([&](core::ConfirmTransaction &tx) {
                    return tx.insertRecordIfAbsent(PaymentRecord{QStringLiteral("PN-%1-%2").arg(round).arg(i),
                                                                 orderNo,
                                                                 Channel::WeChat,
                                                                 PaymentRecordStatus::Creating,
                                                                 1,
                                                                 9900,
                                                                 {},
                                                                 {}});
                }));
            });
            QVERIFY2(inserted.errors == 0, qPrintable(inserted.firstError));
            QCOMPARE(inserted.won.load(), 1);
            QCOMPARE(inserted.lost.load(), kThreads - 1);
            QCOMPARE(countRows(*m_db.database,
                               QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ?"), {orderNo}),
                     qint64(1));
        }
    }

    void failedRecordReuseRace()
    {
        sql::SqlOrders orders(*m_db.database);
        for (int round = 0; round < kRounds; ++round) {
            const QString orderNo = QStringLiteral("ORD-REUSE-%1").arg(round);
            const QString paymentNo = QStringLiteral("PNREUSE%1").arg(round);
            QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
            auto setup = m_store->inTransaction([&](core::ConfirmTransaction &tx) -> core::Result<void> {
                auto r = tx.insertRecordIfAbsent(
                    PaymentRecord{paymentNo, orderNo, Channel::Alipay, PaymentRecordStatus::Creating, 1, 9900, {}, {}});
                if (!r.ok())
                    return r.error();
                auto f = tx.markRecordFailed(paymentNo, QStringLiteral("timeout"));
                if (!f.ok())
                    return f.error();
                return f.value() ? core::Result<void>()
                                 : core::Error::make(core::ErrorCode::Internal, QStringLiteral("x"));
            });
            QVERIFY(setup.ok());
            RaceTally reused;
            runConcurrently(kThreads, [&](int) {
                reused.count(
                    answerInTransaction([&](core::ConfirmTransaction &tx) { return tx.reuseFailedRecord(paymentNo); }));
            });
            QVERIFY2(reused.errors == 0, qPrintable(reused.firstError));
            QCOMPARE(reused.won.load(), 1);
            QCOMPARE(reused.lost.load(), kThreads - 1);
            QCOMPARE(countRows(*m_db.database,
                               QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE payment_no = ? "
                                              "AND status = 'creating' AND attempt = 2"),
                               {paymentNo}),
                     qint64(1));
        }
    }

    // A reused record whose trade the platform closed gets a new out_trade_no: only while
    // it is `creating`, and one renumbering wins among racing ones.
    void renumberingAReusedRecord()
    {
        sql::SqlOrders orders(*m_db.database);
        const QString orderNo = QStringLiteral("ORD-RENUM");
        QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
        auto setup = m_store->inTransaction([&](core::ConfirmTransaction &tx) -> core::Result<void> {
            auto r = tx.insertRecordIfAbsent(PaymentRecord{
                QStringLiteral("PNRENUM0"), orderNo, Channel::WeChat, PaymentRecordStatus::Creating, 2, 9900, {}, {}});
            if (!r.ok())
                return r.error();
            return {};
        });
        QVERIFY(setup.ok());
        RaceTally renumbered;
        runConcurrently(kThreads, [&](int i) {
            renumbered.count(answerInTransaction([&](core::ConfirmTransaction &tx) {
                return tx.renumberRecord(QStringLiteral("PNRENUM0"), QStringLiteral("PNRENUM%1").arg(i + 1));
            }));
        });
        QVERIFY2(renumbered.errors == 0, qPrintable(renumbered.firstError));
        QCOMPARE(renumbered.won.load(), 1);
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ?"),
                           {orderNo}),
                 qint64(1));
        QCOMPARE(countRows(*m_db.database,
                           QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE payment_no = 'PNRENUM0'")),
                 qint64(0));
        // Not creating any more: nothing changes.
        bool again = true;
        auto pendingThen = m_store->inTransaction([&](core::ConfirmTransaction &tx) -> core::Result<void> {
            auto current = tx.record(orderNo, Channel::WeChat);
            if (!current.ok() || !current.value())
                return core::Error::make(core::ErrorCode::Internal, QStringLiteral("record gone"));
            const QString now = current.value()->paymentNo;
            auto pending = tx.markRecordPending(now, QStringLiteral("weixin://y"));
            if (!pending.ok())
                return pending.error();
            auto r = tx.renumberRecord(now, QStringLiteral("PNRENUMLATE"));
            if (!r.ok())
                return r.error();
            again = r.value();
            return {};
        });
        QVERIFY(pendingThen.ok());
        QVERIFY(!again);
    }

    void recordRoundTripAndFencedCas()
    {
        sql::SqlOrders orders(*m_db.database);
        const QString orderNo = QStringLiteral("ORD-RT");
        QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
        bool inserted = false, pending = false;
        core::TransitionOutcome forward{}, stale{};
        std::optional<PaymentRecord> record;
        auto done = m_store->inTransaction([&](core::ConfirmTransaction &tx) -> core::Result<void> {
            inserted = tx.insertRecordIfAbsent({QStringLiteral("PNRT1"),
                                                orderNo,
                                                Channel::WeChat,
                                                PaymentRecordStatus::Creating,
                                                1,
                                                9900,
                                                {},
                                                {}})
                           .value();
            forward = tx.transition(orderNo, core::OrderStatus::Pending, core::OrderStatus::Paying, 5).value();
            stale = tx.transition(orderNo, core::OrderStatus::Paying, core::OrderStatus::Pending, 4).value();
            pending = tx.markRecordPending(QStringLiteral("PNRT1"), QStringLiteral("weixin://x")).value();
            record = tx.record(orderNo, Channel::WeChat).value();
            return {};
        });
        QVERIFY(inserted);
        QCOMPARE(forward, core::TransitionOutcome::Transitioned);
        QCOMPARE(stale, core::TransitionOutcome::StaleFence);
        QVERIFY(pending);
        QVERIFY(record);
        QCOMPARE(record->status, PaymentRecordStatus::Pending);
        QCOMPARE(record->codeUrl, QStringLiteral("weixin://x"));
        QCOMPARE(record->amountFen, qint64(9900));
        QVERIFY(done.ok());
        const auto order = m_store->findOrder(orderNo).value();
        QVERIFY(order);
        QCOMPARE(order->status, core::OrderStatus::Paying);
        QVERIFY(!m_store->findOrder(QStringLiteral("NOPE")).value());
    }

    void breakerModesRoundTrip()
    {
        sql::SqlBreakerModeStore modes(*m_db.database);
        QVERIFY(modes.all().value().isEmpty());
        core::BreakerModeSetting open{core::BreakerMode::ForcedOpen, QStringLiteral("alice"),
                                      QStringLiteral("platform incident"), 1000, 601000};
        QVERIFY(modes.set(QStringLiteral("gateway.wechat"), open).ok());
        core::BreakerModeSetting closed{core::BreakerMode::ForcedClosed, QStringLiteral("bob"), QStringLiteral("drill"),
                                        2000, std::nullopt};
        QVERIFY(modes.set(QStringLiteral("gateway.alipay"), closed).ok());
        QVERIFY(modes.set(QStringLiteral("gateway.alipay"), closed).ok()); // idempotent
        const auto all = modes.all().value();
        QCOMPARE(all.size(), 2);
        QCOMPARE(all.value(QStringLiteral("gateway.wechat")).mode, core::BreakerMode::ForcedOpen);
        QCOMPARE(all.value(QStringLiteral("gateway.wechat")).actor, QStringLiteral("alice"));
        QCOMPARE(all.value(QStringLiteral("gateway.wechat")).expiresAtMs.value_or(0), qint64(601000));
        QCOMPARE(all.value(QStringLiteral("gateway.alipay")).reason, QStringLiteral("drill"));
        QVERIFY(!all.value(QStringLiteral("gateway.alipay")).expiresAtMs);
        QCOMPARE(countRows(*m_db.database,
                           QStringLiteral(
                               "SELECT COUNT(*) FROM settings WHERE name = 'breaker.gateway.alipay' AND version = 2")),
                 qint64(1));
    }

private:
    /// `step` in a confirm transaction of its own: its answer, or the error that failed it.
    core::Result<bool> answerInTransaction(const std::function<core::Result<bool>(core::ConfirmTransaction &)> &step)
    {
        bool answer = false;
        auto done = m_store->inTransaction([&](core::ConfirmTransaction &tx) -> core::Result<void> {
            auto r = step(tx);
            if (!r.ok())
                return r.error();
            answer = r.value();
            return {};
        });
        if (!done.ok())
            return done.error();
        return answer;
    }

    MigratedDatabase m_db;
    std::unique_ptr<sql::SqlPaymentStore> m_store;
};

QTEST_GUILESS_MAIN(TestPaymentStore)
#include "tst_paymentstore.moc"
