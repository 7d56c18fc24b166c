#pragma once

// The callback pipeline's private parts, shared by the files that implement it
// (callbackpipeline.cpp: entry points; callbackreceive.cpp: content checks and the log
// row; callbacksettle.cpp: the paid transaction; callbackonecommit.cpp: the one-commit
// path; callbackreplay.cpp: the operator's replay). Not for other users.

#include "core/callback/callbackpipeline.h"
#include "core/callback/paideffects.h"
#include "core/ports/distributedlock.h"

#include <memory>

namespace payonce::core {

namespace callbackpath {

CallbackOutcome make(CallbackOutcomeCode code, Layer layer, const QString &note, const QString &message,
                     bool durable = false);
CallbackOutcome success(Layer layer, const QString &note, bool durable = true);
/// Logged as a temporary failure: the platform is told FAIL and sends again.
CallbackOutcome unavailable(Layer layer, const QString &note, const QString &why);
/// A test hook stopped the delivery (as if the process died there).
CallbackOutcome abortedByHook();
/// A random key suffix (QA's side_effect switch).
QString nonce();
/// A finding's subject for a payment: "<channel>:<pay_no>".
QString subjectOf(Channel channel, const QString &payNo);
/// A lost CAS to PAID: the order is past it — paid by `payNo` itself (already_paid) or
/// money received twice (double_payment).
bool paidBy(const CallbackOrder &order, const QString &payNo);
/// The answer to a CAS to PAID that `n` lost, from the order as it is now in `tx`:
/// "already_paid", or "double_payment" with its finding raised (new ones appended to
/// newFindings, published once committed).
Result<QString> lostCasOutcome(CallbackTransaction &tx, const QString &orderNo, const PaymentNotification &n,
                               QList<CallbackFinding> &newFindings);

} // namespace callbackpath

/// One delivery's way through the pipeline.
struct CallbackPipeline::Context {
    RawDelivery raw;
    PaymentNotification n;
    CallbackOrder order; ///< as read at the content checks
    CallbackLayerSwitches sw;
    std::optional<qint64> deliveryId;
    bool deliveryDecided = false; ///< the delivery row was written with its decision: no UPDATE after
    bool fromWorker = false;
    bool fromGatewayQuery = false; ///< settleConfirmed: no delivery, merchant checked by the client
    bool fromReplay = false;       ///< replay(): a stored delivery, not appended again
    bool dryRun = false;           ///< replay(dryRun): reads only; changes collects the writes
    QStringList changes;
    bool durable = false;       ///< a pay_callback_log row exists for this pay_no
    bool seenProcessed = false; ///< the seen set remembers this payment processed
    SettledInTransaction audit; ///< run by settle() just before its COMMIT
    /// A delivery (handle()) whose row is decided before it is written — a rejection, a
    /// copy the seen set answers — has it written by the group commit, and answered once it
    /// has committed: process() leaves the row and its answer here.
    struct DeferredRow {
        DeliveryRecord row;
        CallbackOutcome outcome;
        bool finishFailure = false;
    };
    std::optional<DeferredRow> deferred;
};

/// The pay lock `lock:pay:{pay_no}` (L3) as a settling attempt holds it.
struct CallbackPipeline::PayLock {
    std::unique_ptr<LockHandle> handle; ///< null: not taken (switched off, busy or out of reach)
    bool busy = false;                  ///< held by another owner for longer than we waited
    bool unreachable = false;           ///< the key store could not be asked: L4/L5 decide alone
    bool released = false;

    /// The order's fencing token taken with the lock; none without the lock.
    std::optional<qint64> fence() const
    {
        return handle ? std::optional<qint64>(qint64(handle->fencingToken())) : std::nullopt;
    }
};

/// What one run of a settling transaction decided and wrote; reset when the store runs
/// the transaction again.
struct CallbackPipeline::SettleAttempt {
    std::optional<CallbackOutcome> decided; ///< a decision made inside the transaction
    std::optional<qint64> deliveryId;       ///< one commit: the delivery row it inserted
    bool staleFence = false;                ///< the database refused our fencing token
    bool logRowProcessed = false;           ///< one commit: the log row was processed already
    bool lockWaitEnded = false;             ///< one commit: a row lock wait ran out
    PaidEffectsWritten written;             ///< its findings published, its keys counted, once committed
};

} // namespace payonce::core
