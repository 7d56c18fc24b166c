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
    // L3 tried once: a busy lock (another copy of this payment is being paid) or a key store
    // out of reach is the accepted-first path's to handle — it makes the log row durable,
    // then waits or decides without the lock.
    PayLock lock = takePayLock(ctx, std::chrono::milliseconds(0));
    if (lock.busy || lock.unreachable) {
        m_oneCommitFellBack.fetch_add(1);
        return std::nullopt;
    }
    if (auto stopped = stoppedAtLockHook(ctx, lock))
        return *stopped; // as if the process died: the lease runs out, nothing was written

    SettleAttempt attempt;
    auto committed = m_store.inTransaction([&](CallbackTransaction &tx) -> Result<void> {
        attempt = {};
        event(QStringLiteral("begin"));
        auto done = oneCommitIn(tx, ctx, lock, attempt);
        attempt.lockWaitEnded = tx.lockWaitEnded();
        return done;
    });
    afterTransaction(ctx, committed.ok(), lock);

    if (attempt.staleFence)
        reportStaleFence(ctx.order.orderNo, ctx.n.payNo, lock.fence().value_or(0));
    if (!committed.ok())
        return afterOneCommitRolledBack(ctx, attempt, committed.error());
    m_oneCommitted.fetch_add(1);
    publishSettled(ctx, attempt);
    ctx.deliveryId = attempt.deliveryId;
    ctx.deliveryDecided = true;
    ctx.durable = true;
    return attempt.decided;
}

namespace {

/// oneCommitIn's rollbacks on purpose: nothing of this delivery is written, and the
/// accepted-first path runs it from the start.
const Error &fallBack()
{
    static const Error rolledBack = Error::make(ErrorCode::Conflict, QStringLiteral("one-commit path rolled back"));
    return rolledBack;
}

} // namespace

Result<void> CallbackPipeline::oneCommitIn(CallbackTransaction &tx, Context &ctx, const PayLock &lock,
                                           SettleAttempt &attempt)
{
    // A copy never waits on another holder's open transaction for long (a holder paused
    // before its COMMIT, its lease run out): answered from the committed rows afterwards.
    if (auto bounded = tx.boundLockWaits(); !bounded.ok())
        return bounded.error();
    const std::optional<qint64> fence = lock.fence();
    auto moved = casToPaid(tx, ctx, fence);
    if (!moved.ok())
        return moved.error();
    switch (moved.value()) {
    case TransitionOutcome::Transitioned: attempt.decided = success(Layer::None, QStringLiteral("processed")); break;
    case TransitionOutcome::Lost: {
        auto lost = lostCasOutcome(tx, ctx.order.orderNo, ctx.n, attempt.written.newFindings);
        if (!lost.ok())
            return lost.error();
        attempt.decided = success(Layer::StateMachine, lost.value());
        break;
    }
    case TransitionOutcome::StaleFence: attempt.staleFence = true; return fallBack();
    case TransitionOutcome::NotFound: return fallBack();
    }

    if (auto logged = logDeliveryIn(tx, ctx, attempt); !logged.ok())
        return logged;
    if (moved.value() == TransitionOutcome::Transitioned) {
        const QString key = ctx.sw.disableSideEffect ? QStringLiteral("#") + nonce() : QString();
        if (auto wrote = writePaidEffects(tx, ctx.order, ctx.n, fence.value_or(0), key, ctx.raw.traceId,
                                          attempt.written);
            !wrote.ok())
            return wrote.error();
    }
    // A lease we can no longer rely on must not COMMIT.
    if (lock.handle && lock.handle->lost())
        return fallBack();
    return {};
}

Result<void> CallbackPipeline::logDeliveryIn(CallbackTransaction &tx, Context &ctx, SettleAttempt &attempt)
{
    // The delivery's row with its decision, then its log row `processed`.
    const PaymentNotification &n = ctx.n;
    auto id = tx.insertDelivery(deliveryRecordOf(ctx, attempt.decided));
    if (!id.ok())
        return id.error();
    attempt.deliveryId = id.value();
    auto logged = tx.insertProcessed(AcceptedCallback{n.channel, n.payNo, ctx.order.orderNo, n.amountFen,
                                                      attempt.deliveryId, m_clock.nowMs(), n.paymentNo},
                                     attempt.decided->note);
    if (!logged.ok())
        return logged.error();
    if (logged.value() != LogInsert::Duplicate)
        return {};
    // The row exists. `accepted` — a copy made it durable while this delivery held the lock,
    // an accept-only delivery, the patrol's query — is finished here by the lock's holder,
    // as the worker would (a CAS on its status). `processed`: this delivery is a duplicate
    // after all.
    auto finished = tx.finishAcceptedRow(n.channel, n.payNo, attempt.decided->note, *attempt.deliveryId);
    if (!finished.ok())
        return finished.error();
    if (!finished.value()) {
        attempt.logRowProcessed = true;
        return fallBack();
    }
    return {};
}

std::optional<CallbackOutcome> CallbackPipeline::afterOneCommitRolledBack(Context &ctx, const SettleAttempt &attempt,
                                                                          const Error &error)
{
    if (attempt.logRowProcessed)
        return answeredWithoutTransaction(ctx, success(Layer::UniqueIndex, QStringLiteral("log_row_exists")));
    if (attempt.lockWaitEnded && m_options.history) {
        // Another holder has this payment's rows locked. The log row's committed state
        // answers without waiting (MVCC): durable, a duplicate; none, not yet — FAIL, and
        // the platform's retry finds it settled.
        auto status = m_options.history->logRowStatus(ctx.n.channel, ctx.n.payNo);
        if (!status.ok())
            return unavailable(Layer::None, QStringLiteral("storage"), status.error().internalMessage);
        if (status.value())
            return answeredWithoutTransaction(ctx, success(Layer::UniqueIndex, QStringLiteral("log_row_exists")));
        return answeredWithoutTransaction(ctx, make(CallbackOutcomeCode::Unavailable, Layer::None,
                                                    QStringLiteral("held_by_another"),
                                                    QStringLiteral("this payment is being processed; retry")));
    }
    // Rolled back, on purpose or not: whatever the reason, the accepted-first path starts
    // from a state this attempt did not change. (A COMMIT whose answer was lost may have gone
    // through: that path then meets the log row and answers from it.)
    if (error.internalMessage != fallBack().internalMessage)
        qCWarning(payonce::lcCore) << "callback: one-commit transaction failed, accepted-first path next:"
                                   << error.internalMessage;
    m_oneCommitFellBack.fetch_add(1);
    return std::nullopt;
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
