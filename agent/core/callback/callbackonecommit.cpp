// The one-commit path of a verified, unseen delivery (docs/design.md, "Callback path: one
// commit"): its delivery row, its log row and the paid transaction commit together.
#include "core/callback/callbackpipelinecontext.h"
#include "core/callback/paideffects.h"

#include "core/ports/callbackhistory.h"
#include "core/ports/clock.h"
#include "core/ports/distributedlock.h"
#include "core/ports/idempotencycache.h"

#include "logging/categories.h"

namespace payonce::core {

using namespace callbackpath;

bool CallbackPipeline::oneCommitApplies(Context &ctx)
{
    // Deliveries only (the worker, replays and the patrol's settlements finish rows that
    // exist), with every layer on except the lock (QA's runs without it still have the log
    // row and the CAS; the ghost ordering is the accepted-first path's), and not while the
    // desk sheds load to accept-only.
    if (!m_options.oneCommit || ctx.fromWorker || ctx.fromGatewayQuery || ctx.fromReplay || ctx.dryRun)
        return false;
    if (ctx.sw.disableUniqueIndex || ctx.sw.unlockBeforeCommit)
        return false;
    return currentMode() != CallbackMode::AcceptOnly;
}

std::optional<CallbackOutcome> CallbackPipeline::settleInOneCommit(Context &ctx)
{
    const PaymentNotification &n = ctx.n;
    const QString orderNo = ctx.order.orderNo;

    // L3 tried once: a busy lock (another copy of this payment is being paid) or a key store
    // out of reach is the accepted-first path's to handle — it makes the log row durable,
    // then waits or decides without the lock.
    std::unique_ptr<LockHandle> lock;
    if (!ctx.sw.disableLock) {
        auto acquired = m_locks.acquire(QStringLiteral("lock:pay:") + n.payNo, m_options.lockTtl, orderNo);
        if (!acquired.ok() || !acquired.value()) {
            m_oneCommitFellBack.fetch_add(1);
            return std::nullopt;
        }
        lock = std::move(acquired).value();
        event(QStringLiteral("lock"));
    }
    const std::optional<qint64> fence = lock ? std::optional<qint64>(qint64(lock->fencingToken())) : std::nullopt;
    if (!hook(CallbackHookPoint::AfterLockBeforeBegin, ctx, lock.get())) {
        // As if the process died: the lease runs out, nothing was written.
        if (lock)
            lock->stopRenewingForTest();
        (void)lock.release(); // leaked on purpose: a dead process releases nothing
        return make(CallbackOutcomeCode::Internal, Layer::None, QStringLiteral("aborted_by_hook"),
                    QStringLiteral("stopped"));
    }

    const QString key = ctx.sw.disableSideEffect ? QStringLiteral("#") + nonce() : QString();
    std::optional<CallbackOutcome> decided;
    std::optional<qint64> deliveryId;
    bool staleFence = false;
    bool logRowProcessed = false;
    PaidEffectsWritten written; // its findings published, its keys counted, once committed
    // Any reason not to commit rolls everything back: nothing of this delivery is written,
    // and the accepted-first path runs it from the start.
    const Error fallBack = Error::make(ErrorCode::Conflict, QStringLiteral("one-commit path rolled back"));
    bool waitEnded = false;
    auto body = [&](CallbackTransaction &tx) -> Result<void> {
        // A copy never waits on another holder's open transaction for long (a holder paused
        // before its COMMIT, its lease run out): answered from the committed rows below.
        if (auto bounded = tx.boundLockWaits(); !bounded.ok())
            return bounded.error();
        Result<TransitionOutcome> moved = TransitionOutcome::Lost;
        if (!ctx.sw.disableStateMachine) {
            moved = tx.markPaid(orderNo, n.payNo, n.channel, fence);
        } else if (ctx.order.status == OrderStatus::Pending || ctx.order.status == OrderStatus::Paying) {
            moved = tx.forcePaid(orderNo, n.payNo, n.channel, fence); // QA: decided on the earlier read
        }
        if (!moved.ok())
            return moved.error();
        switch (moved.value()) {
        case TransitionOutcome::Transitioned: decided = success(Layer::None, QStringLiteral("processed")); break;
        case TransitionOutcome::Lost: {
            auto lost = lostCasOutcome(tx, orderNo, n, written.newFindings);
            if (!lost.ok())
                return lost.error();
            decided = success(Layer::StateMachine, lost.value());
            break;
        }
        case TransitionOutcome::StaleFence: staleFence = true; return fallBack;
        case TransitionOutcome::NotFound: return fallBack;
        }

        // The delivery's row with its decision, then its log row `processed`.
        auto id = tx.insertDelivery(deliveryRecordOf(ctx, decided));
        if (!id.ok())
            return id.error();
        deliveryId = id.value();
        auto logged = tx.insertProcessed(
            AcceptedCallback{n.channel, n.payNo, orderNo, n.amountFen, deliveryId, m_clock.nowMs(), n.paymentNo},
            decided->note);
        if (!logged.ok())
            return logged.error();
        if (logged.value() == LogInsert::Duplicate) {
            // The row exists. `accepted` — a copy made it durable while this delivery held
            // the lock, an accept-only delivery, the patrol's query — is finished here by
            // the lock's holder, as the worker would (a CAS on its status). `processed`:
            // this delivery is a duplicate after all.
            auto finished = tx.finishAcceptedRow(n.channel, n.payNo, decided->note, *deliveryId);
            if (!finished.ok())
                return finished.error();
            if (!finished.value()) {
                logRowProcessed = true;
                return fallBack;
            }
        }

        if (moved.value() == TransitionOutcome::Transitioned) {
            if (auto wrote = writePaidEffects(tx, ctx.order, n, fence.value_or(0), key, ctx.raw.traceId, written);
                !wrote.ok())
                return wrote.error();
        }
        // A lease we can no longer rely on must not COMMIT.
        if (lock && lock->lost())
            return fallBack;
        return {};
    };
    auto committed = m_store.inTransaction([&](CallbackTransaction &tx) -> Result<void> {
        decided.reset();
        deliveryId.reset();
        staleFence = false;
        logRowProcessed = false;
        written = {};
        event(QStringLiteral("begin"));
        auto done = body(tx);
        waitEnded = tx.lockWaitEnded();
        return done;
    });
    event(committed.ok() ? QStringLiteral("commit") : QStringLiteral("rollback"));
    // COMMIT (or rollback) is behind us: only now the lock goes (docs/design.md rule 1).
    if (lock) {
        (void)lock->release();
        event(QStringLiteral("unlock"));
    }
    (void)hook(CallbackHookPoint::AfterUnlock, ctx);

    if (staleFence)
        reportStaleFence(orderNo, n.payNo, fence.value_or(0));
    if (!committed.ok() && logRowProcessed)
        return answeredWithoutTransaction(ctx, success(Layer::UniqueIndex, QStringLiteral("log_row_exists")));
    if (!committed.ok() && waitEnded && m_options.history) {
        // Another holder has this payment's rows locked. The log row's committed state
        // answers without waiting (MVCC): durable, a duplicate; none, not yet — FAIL, and
        // the platform's retry finds it settled.
        auto status = m_options.history->logRowStatus(n.channel, n.payNo);
        if (!status.ok())
            return unavailable(Layer::None, QStringLiteral("storage"), status.error().internalMessage);
        if (status.value())
            return answeredWithoutTransaction(ctx, success(Layer::UniqueIndex, QStringLiteral("log_row_exists")));
        return answeredWithoutTransaction(ctx, make(CallbackOutcomeCode::Unavailable, Layer::None,
                                                    QStringLiteral("held_by_another"),
                                                    QStringLiteral("this payment is being processed; retry")));
    }
    if (!committed.ok()) {
        // Rolled back, on purpose or not: whatever the reason, the accepted-first path
        // starts from a state this attempt did not change. (A COMMIT whose answer was lost
        // may have gone through: that path then meets the log row and answers from it.)
        if (committed.error().internalMessage != fallBack.internalMessage)
            qCWarning(payonce::lcCore) << "callback: one-commit transaction failed, accepted-first path next:"
                                       << committed.error().internalMessage;
        m_oneCommitFellBack.fetch_add(1);
        return std::nullopt;
    }
    m_oneCommitted.fetch_add(1);
    m_byLayer[std::size_t(Layer::SideEffect)].fetch_add(written.keysFoundTaken);
    for (const CallbackFinding &finding : std::as_const(written.newFindings))
        publishFinding(finding);
    if (m_seen)
        (void)m_seen->markProcessed(channelName(n.channel), n.payNo,
                                    SeenPayment{orderNo, n.paymentNo, n.amountFen, n.currency});
    ctx.deliveryId = deliveryId;
    ctx.deliveryDecided = true;
    ctx.durable = true;
    return decided;
}

CallbackOutcome CallbackPipeline::answeredWithoutTransaction(Context &ctx, const CallbackOutcome &outcome)
{
    // Nothing of the one-commit transaction stands: the delivery's row is written decided,
    // through the group commit, before the answer goes.
    auto appended = m_decidedDeliveries.append(deliveryRecordOf(ctx, outcome));
    if (!appended.ok())
        return unavailable(Layer::None, QStringLiteral("storage"), appended.error().internalMessage);
    ctx.deliveryId = appended.value();
    ctx.deliveryDecided = true;
    ctx.durable = outcome.success();
    return outcome;
}

} // namespace payonce::core
