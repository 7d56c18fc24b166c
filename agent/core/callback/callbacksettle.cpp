// The paid transaction of the accepted-first path (docs/design.md, "Callback path"), and
// the pieces both paths share: the pay lock, the CAS to PAID, what happens after COMMIT.
#include "core/callback/callbackpipelinecontext.h"

#include "core/ports/clock.h"
#include "core/ports/distributedlock.h"
#include "core/ports/idempotencycache.h"

#include "logging/categories.h"

#include <thread>

namespace payonce::core {

using namespace callbackpath;
using Code = CallbackOutcomeCode;

namespace {

/// settleIn's rollbacks on purpose: the decision it made stands.
const Error &decidedRollback()
{
    static const Error rollback = Error::make(ErrorCode::Conflict,
                                              QStringLiteral("callback decided inside the transaction"));
    return rollback;
}

} // namespace

CallbackPipeline::PayLock CallbackPipeline::takePayLock(const Context &ctx, std::chrono::milliseconds wait)
{
    PayLock pay;
    if (ctx.sw.disableLock)
        return pay;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        auto acquired = m_locks.acquire(QStringLiteral("lock:pay:") + ctx.n.payNo, m_options.lockTtl,
                                        ctx.order.orderNo);
        if (!acquired.ok()) {
            pay.unreachable = true;
            if (qint64 heldBack = 0; m_lockUnavailableLog.admit(m_clock.nowMs(), &heldBack))
                qCWarning(payonce::lcCore).noquote()
                    << "callback: L3 unavailable (key store degraded), L4/L5 decide:"
                    << acquired.error().internalMessage
                    << QStringLiteral("(%1 more since the last such line)").arg(heldBack);
            return pay;
        }
        if (acquired.value()) {
            pay.handle = std::move(acquired).value();
            event(QStringLiteral("lock"));
            return pay;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            pay.busy = true;
            return pay;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

std::optional<CallbackOutcome> CallbackPipeline::stoppedAtLockHook(const Context &ctx, PayLock &lock) const
{
    if (hook(CallbackHookPoint::AfterLockBeforeBegin, ctx, lock.handle.get()))
        return std::nullopt;
    // As if the process died: the lease simply runs out (no release).
    if (lock.handle)
        lock.handle->stopRenewingForTest();
    (void)lock.handle.release(); // the handle is leaked on purpose: a dead process releases nothing
    return abortedByHook();
}

void CallbackPipeline::releasePayLock(PayLock &lock)
{
    if (!lock.handle || lock.released)
        return;
    lock.released = true;
    (void)lock.handle->release();
    event(QStringLiteral("unlock"));
}

void CallbackPipeline::afterTransaction(const Context &ctx, bool committed, PayLock &lock)
{
    event(committed ? QStringLiteral("commit") : QStringLiteral("rollback"));
    // COMMIT (or rollback) is behind us: only now the lock goes (docs/design.md rule 1).
    releasePayLock(lock);
    (void)hook(CallbackHookPoint::AfterUnlock, ctx);
}

Result<TransitionOutcome> CallbackPipeline::casToPaid(CallbackTransaction &tx, const Context &ctx,
                                                      std::optional<qint64> fence) const
{
    if (!ctx.sw.disableStateMachine)
        return tx.markPaid(ctx.order.orderNo, ctx.n.payNo, ctx.n.channel, fence);
    // QA's classic race: the decision was made on the read of the content checks.
    const OrderStatus seen = ctx.order.status;
    if (seen == OrderStatus::Pending || seen == OrderStatus::Paying)
        return tx.forcePaid(ctx.order.orderNo, ctx.n.payNo, ctx.n.channel, fence);
    return TransitionOutcome::Lost;
}

void CallbackPipeline::publishSettled(const Context &ctx, const SettleAttempt &attempt)
{
    m_byLayer[std::size_t(Layer::SideEffect)].fetch_add(attempt.written.keysFoundTaken);
    for (const CallbackFinding &finding : std::as_const(attempt.written.newFindings))
        publishFinding(finding);
    if (m_seen && !ctx.sw.disableUniqueIndex)
        (void)m_seen->markProcessed(channelName(ctx.n.channel), ctx.n.payNo,
                                    SeenPayment{ctx.order.orderNo, ctx.n.paymentNo, ctx.n.amountFen, ctx.n.currency});
}

CallbackOutcome CallbackPipeline::settle(Context &ctx)
{
    if (ctx.dryRun)
        return predictSettle(ctx);

    // L3: the pay lock, with the order's fencing token taken in the same step.
    PayLock lock = takePayLock(ctx, m_options.lockWait);
    if (lock.busy) {
        // Rule 8: SUCCESS only when a durable row backs it (its holder or the worker
        // finishes that row); otherwise the platform must try again.
        if (ctx.durable)
            return success(Layer::Lock, QStringLiteral("lock_busy_durable"));
        return make(Code::Unavailable, Layer::Lock, QStringLiteral("lock_busy"),
                    QStringLiteral("this payment is being processed; retry"));
    }
    if (auto stopped = stoppedAtLockHook(ctx, lock))
        return *stopped;

    SettleAttempt attempt;
    auto committed = m_store.inTransaction([&](CallbackTransaction &tx) -> Result<void> {
        attempt = {};
        event(QStringLiteral("begin"));
        return settleIn(tx, ctx, lock, attempt);
    });
    afterTransaction(ctx, committed.ok(), lock);

    if (attempt.staleFence)
        reportStaleFence(ctx.order.orderNo, ctx.n.payNo, lock.fence().value_or(0));
    if (committed.ok()) {
        publishSettled(ctx, attempt);
        // No decision inside the transaction: this delivery paid the order.
        if (lock.unreachable && !attempt.decided)
            m_unfenced.fetch_add(1);
    }
    // A decision made inside the transaction stands when it rolled back on purpose, or when
    // its commit (a lost CAS: processed row, finding) went through.
    if (attempt.decided && (committed.ok() || committed.error().internalMessage == decidedRollback().internalMessage))
        return *attempt.decided;
    if (!committed.ok())
        return unavailable(Layer::None, QStringLiteral("storage"), committed.error().internalMessage);
    return success(Layer::None, QStringLiteral("processed"));
}

Result<void> CallbackPipeline::settleIn(CallbackTransaction &tx, Context &ctx, PayLock &lock, SettleAttempt &attempt)
{
    const PaymentNotification &n = ctx.n;
    const std::optional<qint64> fence = lock.fence();
    auto moved = casToPaid(tx, ctx, fence);
    if (!moved.ok())
        return moved.error();
    switch (moved.value()) {
    case TransitionOutcome::Transitioned: break;
    case TransitionOutcome::NotFound:
        attempt.decided = make(Code::UnknownOrder, Layer::Rejected, QStringLiteral("unknown_order"),
                               QStringLiteral("the order vanished"));
        return decidedRollback();
    case TransitionOutcome::StaleFence:
        attempt.staleFence = true;
        attempt.decided = ctx.durable ? success(Layer::Lock, QStringLiteral("stale_fence"))
                                      : make(Code::Unavailable, Layer::Lock, QStringLiteral("stale_fence"),
                                             QStringLiteral("a newer holder owns this order; retry"));
        return decidedRollback();
    case TransitionOutcome::Lost: return recordLostCas(tx, ctx, attempt);
    }

    // The order is PAID by us: its log row processed, then every effect on its own key,
    // the hot stock rows last (writePaidEffects).
    if (ctx.durable) {
        if (auto marked = tx.markProcessed(n.channel, n.payNo, QStringLiteral("processed")); !marked.ok())
            return marked.error();
    }
    const QString key = ctx.sw.disableSideEffect ? QStringLiteral("#") + nonce() : QString();
    if (auto wrote = writePaidEffects(tx, ctx.order, n, fence.value_or(0), key, ctx.raw.traceId, attempt.written);
        !wrote.ok())
        return wrote.error();
    // A lease we can no longer rely on must not COMMIT.
    if (lock.handle && lock.handle->lost()) {
        attempt.decided = ctx.durable ? success(Layer::Lock, QStringLiteral("lock_lost"))
                                      : make(Code::Unavailable, Layer::Lock, QStringLiteral("lock_lost"),
                                             QStringLiteral("the payment lock was lost; retry"));
        return decidedRollback();
    }
    if (ctx.sw.unlockBeforeCommit) {
        // Test only: the classic ghost (`finally { unlock }` before the proxy commits).
        releasePayLock(lock);
        if (!hook(CallbackHookPoint::BetweenUnlockAndCommit, ctx))
            return Error::make(ErrorCode::Internal, QStringLiteral("stopped by the test hook"));
    }
    if (ctx.audit)
        return ctx.audit(success(Layer::None, QStringLiteral("processed")));
    return {};
}

Result<void> CallbackPipeline::recordLostCas(CallbackTransaction &tx, Context &ctx, SettleAttempt &attempt)
{
    // Somebody else made a transition: which one decides the answer (rule 2). The commit
    // carries the outcome: the finding and the processed row.
    auto lost = lostCasOutcome(tx, ctx.order.orderNo, ctx.n, attempt.written.newFindings);
    if (!lost.ok())
        return lost.error();
    if (ctx.durable) {
        if (auto marked = tx.markProcessed(ctx.n.channel, ctx.n.payNo, lost.value()); !marked.ok())
            return marked.error();
    }
    attempt.decided = success(Layer::StateMachine, lost.value());
    if (ctx.audit)
        return ctx.audit(*attempt.decided);
    return {};
}

} // namespace payonce::core
