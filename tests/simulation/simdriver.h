#pragma once

#include "ledgerinvariants.h"
#include "simclock.h"
#include "simplatform.h"
#include "simrandom.h"
#include "simworld.h"

#include "config/databaseurl.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <set>

namespace payonce::simulation {

/// The deliberately wrong behaviours a run can switch on (--mutant NAME).
QStringList mutantNames();

struct RunOptions {
    quint64 seed = 1;
    int steps = 1000;
    int maxOrders = 300;
    QString mutant; ///< empty: none
    config::DatabaseUrl url;
    QString dialect;
    /// Receives every line of the operation trace (the determinism check compares them).
    std::function<void(const QString &)> traceLine;
    /// Receives the progress and violation report (stdout).
    std::function<void(const QString &)> report;
};

struct RunResult {
    int stepsRun = 0;
    std::optional<Violation> violation;
    int violationStep = 0;
};

/// One seeded run of the lifecycle simulation: builds the world on a migrated database,
/// draws `steps` operations from the seed (orders, confirms against a scripted gateway,
/// WeChat and Alipay notifications first / duplicated / out of order / late / forged /
/// for a second pay_no / for a CLOSED order / with another amount, the worker, accept-only,
/// replays, refunds (whole, partial by amount and items, of extra payments) with every platform answer, close and patrol runs, compensations of
/// every kind approved once, twice, concurrently or by their proposer, the outbox with
/// failing handlers and re-drives, crashes), checks the ledger after each, and at the end
/// drives everything to quiescence and checks again. Single-threaded but for the
/// concurrent approvals, so that a seed replays the same operations and outcomes.
class SimDriver {
public:
    explicit SimDriver(RunOptions options);
    ~SimDriver();

    RunResult run();
    /// The last 30 operations of the trace (for the violation report).
    const QStringList &lastOperations() const { return m_lastOps; }

private:
    struct Op;
    struct Sent {
        core::RawDelivery raw;
        QString orderNo;
        QString payNo;
    };
    struct OrderModel {
        QString orderNo;
        qint64 userId = 0;
        qint64 amountFen = 0;
        QMap<QString, qint64> items; // sku → qty bought
    };

    core::Result<void> rebuild();
    std::optional<Violation> step(int number);
    std::optional<Violation> quiesce();
    std::optional<Violation> checkAll(const QStringList &orders);

    // Operations: each returns its trace line and what it touched.
    QString opCreateOrder(Op &op);
    QString opConfirm(Op &op);
    QString opUserPays(Op &op);
    QString opDeliver(Op &op, bool crash);
    QString opStrayPayment(Op &op, bool forClosed);
    QString opAmountChanged(Op &op);
    QString opWorker(Op &op);
    QString opMode(Op &op);
    QString opReplay(Op &op);
    QString opRefundOwn(Op &op);
    QString opRefundPartial(Op &op);
    QString opRefundStray(Op &op);
    QString opRefundFinish(Op &op);
    QString opRefundResend(Op &op);
    QString opRefundFollowUp(Op &op);
    QString opClose(Op &op);
    QString opPatrol(Op &op);
    QString opCompensation(Op &op);
    QString opApproveProposals(Op &op);
    QString opOutbox(Op &op);
    QString opRedrive(Op &op);
    QString opCrash(Op &op);
    QString opClock(Op &op);

    QString deliver(Op &op, const Sent &sent, const QString &label);
    /// The memory-first agent's handleFromMemory(), waited for: nullopt when it declined.
    std::optional<core::CallbackOutcome> answerFromMemory(const core::RawDelivery &raw);
    QString submitRefund(const QString &refundNo, core::Channel channel);
    QString settleRefund(const core::RefundNotification &n);
    QString decide(Op &op, qint64 id, const QString &kind);
    QString pickOrder(const QStringList &preferred);
    QStringList tableCounts();

    RunOptions m_options;
    SimClock m_clock;
    SimRandom m_random;
    SimPlatform m_platform;
    WorldProbe m_probe;
    core::OutboxHandlerRegistry m_handlers;
    class OnceHandler;
    std::shared_ptr<OnceHandler> m_handler;
    std::unique_ptr<SimWorld> m_world;
    std::unique_ptr<LedgerInvariants> m_ledger;

    QList<OrderModel> m_orders;
    QList<Sent> m_queue;   // sent by the platform, not yet delivered
    QList<Sent> m_history; // every notification sent (duplicates come from here)
    QList<Sent> m_strays;  // second payments and payments for CLOSED orders
    bool m_acceptOnly = false;
    std::optional<Violation> m_opViolation; // found while an operation ran
    int m_crashes = 0;
    int m_deliveries = 0;
    int m_answeredFromMemory = 0;
    QStringList m_lastOps;
};

} // namespace payonce::simulation
