#pragma once

#include "core/ports/auditwriter.h"
#include "core/ports/compensationstore.h"
#include "core/ports/eventsink.h"

namespace payonce::core {

struct ProposeOutcome {
    Compensation compensation;
    bool created = false; ///< false: a proposal with the same dedup_key already existed
};

struct DecisionOutcome {
    Compensation compensation; ///< as it stands after the call
    bool decidedNow = false;   ///< false: already decided the same way (nothing written)
};

/// Compensations with four-eyes approval (docs/design.md rule 7, docs/openapi.yaml compensations):
/// propose (by the patrol as "system:patrol" or an operator) → approve or reject by an
/// approver who is not the proposer (FourEyes otherwise) → on approval, executed in the
/// same transaction: proposed → approved → executed by CAS, so approving twice (or from
/// many threads) executes once. Nothing is deleted: an extra coupon is frozen, extra
/// points are reversed by a negative entry keyed "reversal:<id>", stock given back with a
/// negative stock_log entry. Every step lands in the audit trail inside its transaction
/// (the AuditWriter joins the store's transaction on the same thread).
/// A refund's execution records the refund (CompensationTransaction::requestRefund: the
/// order's own payment moves the order PAID → REFUNDING); the platform is asked after
/// COMMIT by RefundService::submit with result["refund_no"], and the refund row, not the
/// compensation, tracks it from there (a refund that fails marks the compensation failed).
/// After each COMMIT that changed something, `events` gets compensation.proposed, or
/// compensation.decided ("approved" then "executed", or "rejected") with the actor and reason.
class CompensationService {
public:
    CompensationService(CompensationStore &store, AuditWriter &audit, EventSink events = {})
        : m_store(store), m_audit(audit), m_events(std::move(events))
    {
    }

    Result<ProposeOutcome> propose(const CompensationProposal &proposal, qint64 nowMs);
    Result<DecisionOutcome> approve(qint64 id, const QString &approver, const QString &reason, qint64 nowMs);
    Result<DecisionOutcome> reject(qint64 id, const QString &approver, const QString &reason, qint64 nowMs);
    Result<QList<Compensation>> list(const QString &status, int limit) { return m_store.list(status, limit); }

private:
    Result<DecisionOutcome> decide(qint64 id, bool approve, const QString &actor, const QString &reason, qint64 nowMs);
    Result<void> sameDecisionAgain(CompensationTransaction &tx, qint64 id, bool approve, DecisionOutcome &outcome);
    Result<void> executeApproved(CompensationTransaction &tx, const Compensation &before, const QString &actor,
                                 const QString &reason, qint64 nowMs);

    void publish(const QString &kind, const Compensation &c, const QString &value, const QString &actor,
                 const QString &reason) const;

    CompensationStore &m_store;
    AuditWriter &m_audit;
    EventSink m_events;
};

} // namespace payonce::core
