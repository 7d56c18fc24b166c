// PatrolRunner: one patrol run at a time per agent. A run held inside the store (a latch)
// makes a second tryRun() answer "busy" at once without running; afterwards runs go
// again, and a run asked for at an earlier or equal time still gets a later clock.

#include "core/settlement/compensationservice.h"
#include "core/settlement/patrol.h"
#include "core/settlement/patrolrunner.h"

#include <QSemaphore>
#include <QTest>
#include <QThread>

using namespace payonce;
using namespace payonce::core;

namespace {

/// No PAID orders and nothing stuck; paidOrders() can be held until released, and records the run times
/// through resolveNotSeenSince().
class HeldStore final : public PatrolStore {
public:
    Result<QList<PaidOrderEffects>> paidOrders(const QString &, int) override
    {
        entered.release();
        if (hold)
            release.acquire();
        return QList<PaidOrderEffects>{};
    }
    Result<StoredFinding> raiseFinding(const Finding &, qint64) override
    {
        return Error::make(ErrorCode::Internal, QStringLiteral("not expected"));
    }
    Result<QList<StuckPayingOrder>> stuckPaying(qint64, int) override { return QList<StuckPayingOrder>{}; }
    Result<bool> revertPaying(const QString &, const QList<QPair<QString, QString>> &, const QString &, qint64,
                              const InTransaction &) override
    {
        return Error::make(ErrorCode::Internal, QStringLiteral("not expected"));
    }
    Result<QList<StuckAcceptedRow>> stuckAccepted(qint64, int) override { return QList<StuckAcceptedRow>{}; }
    Result<QList<PaymentAnomaly>> paymentAnomalies(qint64, int, qint64 *) override { return QList<PaymentAnomaly>{}; }
    Result<int> resolveNotSeenSince(const QStringList &, qint64 seenSinceMs, qint64) override
    {
        runTimes.append(seenSinceMs);
        return 0;
    }

    bool hold = false;
    QSemaphore entered;
    QSemaphore release;
    QList<qint64> runTimes;
};

/// Never reached: there are no orders to propose for.
class NoCompensations final : public CompensationStore, public AuditWriter {
public:
    Result<QList<Compensation>> list(const QString &, int) override { return QList<Compensation>{}; }
    Result<void> inTransaction(const std::function<Result<void>(CompensationTransaction &)> &) override
    {
        return Error::make(ErrorCode::Internal, QStringLiteral("not expected"));
    }
    Result<qint64> append(const AuditEntry &) override { return qint64(0); }
};

} // namespace

class TestPatrolRunner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aSecondRunWhileOneIsGoingIsRefused()
    {
        HeldStore store;
        NoCompensations none;
        CompensationService compensations(none, none);
        Patrol patrol(store, compensations);
        PatrolRunner runner(patrol);

        store.hold = true;
        std::optional<bool> firstRan;
        std::unique_ptr<QThread> first(QThread::create([&] {
            auto run = runner.tryRun(1000);
            firstRan = run.ok() && run.value().has_value();
        }));
        first->start();
        QVERIFY(store.entered.tryAcquire(1, 10000)); // the first run is inside the store now

        auto second = runner.tryRun(1001);
        QVERIFY(second.ok());
        QVERIFY(!second.value().has_value());
        QCOMPARE(store.entered.available(), 0); // the second did not run

        store.release.release();
        QVERIFY(first->wait(10000));
        QCOMPARE(firstRan, std::optional<bool>(true));

        store.hold = false;
        auto third = runner.tryRun(1000); // the clock went backwards: the run still moves on
        QVERIFY(third.ok());
        QVERIFY(third.value().has_value());
        QCOMPARE(store.runTimes.size(), 2);
        QVERIFY(store.runTimes.at(1) > store.runTimes.at(0));
    }
};

QTEST_GUILESS_MAIN(TestPatrolRunner)
#include "tst_patrolrunner.moc"
