#pragma once

// The callback pipeline's private parts, shared by the files that implement it
// (callbackpipeline.cpp, callbackonecommit.cpp). Not for other users.

#include "core/callback/callbackpipeline.h"

namespace payonce::core {

namespace callbackpath {

CallbackOutcome make(CallbackOutcomeCode code, Layer layer, const QString &note, const QString &message,
                     bool durable = false);
CallbackOutcome success(Layer layer, const QString &note, bool durable = true);
/// Logged as a temporary failure: the platform is told FAIL and sends again.
CallbackOutcome unavailable(Layer layer, const QString &note, const QString &why);
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

} // namespace payonce::core
