#include "core/settlement/compensationservice.h"

#include "core/qa/mutants.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace payonce::core {

QString compensationKindName(CompensationKind kind)
{
    switch (kind) {
    case CompensationKind::FreezeCoupon: return QStringLiteral("freeze_coupon");
    case CompensationKind::ReversePoints: return QStringLiteral("reverse_points");
    case CompensationKind::RestoreStock: return QStringLiteral("restore_stock");
    case CompensationKind::Refund: return QStringLiteral("refund");
    }
    Q_UNREACHABLE();
}

std::optional<CompensationKind> compensationKindFromName(QStringView name)
{
    for (auto kind : {CompensationKind::FreezeCoupon, CompensationKind::ReversePoints, CompensationKind::RestoreStock,
                      CompensationKind::Refund}) {
        if (name == compensationKindName(kind))
            return kind;
    }
    return std::nullopt;
}

namespace {

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QString target(qint64 id)
{
    return QStringLiteral("compensation:%1").arg(id);
}

QJsonObject stateOf(const Compensation &c)
{
    QJsonObject o{{QStringLiteral("status"), c.status},
                  {QStringLiteral("kind"), compensationKindName(c.kind)},
                  {QStringLiteral("order_no"), c.orderNo}};
    if (!c.decidedBy.isEmpty())
        o.insert(QStringLiteral("decided_by"), c.decidedBy);
    if (!c.result.isEmpty())
        o.insert(QStringLiteral("result"), c.result);
    return o;
}

Error notFound(qint64 id)
{
    return Error::make(ErrorCode::NotFound, QStringLiteral("no compensation %1").arg(id));
}

/// What approving the compensation does, by kind: its result for the row and the audit.
Result<QJsonObject> carryOut(CompensationTransaction &tx, const Compensation &before, qint64 nowMs)
{
    const qint64 id = before.id;
    QJsonObject result;
    switch (before.kind) {
    case CompensationKind::FreezeCoupon: {
        auto frozen = tx.freezeExtraCoupons(before.orderNo, nowMs);
        if (!frozen)
            return frozen.error();
        QJsonArray ids;
        for (qint64 couponId : frozen.value())
            ids.append(couponId);
        result.insert(QStringLiteral("frozen_coupon_ids"), ids);
        break;
    }
    case CompensationKind::ReversePoints: {
        auto reversed = tx.reverseExtraPoints(before.orderNo, QStringLiteral("reversal:%1").arg(id), nowMs);
        if (!reversed)
            return reversed.error();
        result.insert(QStringLiteral("points_delta"), reversed.value());
        break;
    }
    case CompensationKind::RestoreStock: {
        auto restored = tx.restoreExtraStock(before.orderNo, QStringLiteral("reversal:%1").arg(id), nowMs);
        if (!restored)
            return restored.error();
        result = restored.value();
        break;
    }
    case CompensationKind::Refund: {
        // Recorded here, in the approval's transaction; the platform is asked after
        // COMMIT (RefundService::submit), under the compensation's refund number.
        auto refund = tx.requestRefund(before, nowMs);
        if (!refund)
            return refund.error();
        const RefundRecord &r = refund.value();
        result.insert(QStringLiteral("refund_no"), r.refundNo);
        result.insert(QStringLiteral("pay_no"), r.payNo);
        result.insert(QStringLiteral("channel"), channelName(r.channel));
        result.insert(QStringLiteral("amount_fen"), r.amountFen);
        result.insert(QStringLiteral("own_payment"), r.ownPayment);
        result.insert(QStringLiteral("partial"), r.partial);
        if (!r.items.isEmpty())
            result.insert(QStringLiteral("items"), refundItemsObject(r.items));
        break;
    }
    }
    return result;
}

} // namespace

Result<ProposeOutcome> CompensationService::propose(const CompensationProposal &proposal, qint64 nowMs)
{
    if (proposal.orderNo.isEmpty() || proposal.proposedBy.isEmpty() || proposal.reason.isEmpty()) {
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("a proposal needs order_no, proposer and reason"));
    }
    ProposeOutcome outcome;
    auto done = m_store.inTransaction([&](CompensationTransaction &tx) -> Result<void> {
        if (proposal.kind == CompensationKind::Refund) {
            // A refund the approval would refuse is refused now, with nothing written; the
            // same proposal made again answers the first one as it is.
            std::optional<Compensation> earlier;
            if (!proposal.dedupKey.isEmpty()) {
                auto found = tx.findByDedupKey(proposal.dedupKey);
                if (!found)
                    return found.error();
                earlier = found.value();
            }
            if (!earlier) {
                if (auto refundable = tx.checkRefund(proposal); !refundable)
                    return refundable.error();
            }
        }
        auto inserted = tx.insertProposal(proposal, nowMs);
        if (!inserted)
            return inserted.error();
        std::optional<Compensation> row;
        if (inserted.value()) {
            auto found = tx.find(*inserted.value());
            if (!found)
                return found.error();
            row = found.value();
        } else {
            auto found = tx.findByDedupKey(proposal.dedupKey);
            if (!found)
                return found.error();
            row = found.value();
        }
        if (!row)
            return Error::make(ErrorCode::Internal, QStringLiteral("a proposal vanished in its own transaction"));
        outcome.compensation = *row;
        outcome.created = inserted.value().has_value();
        if (!outcome.created)
            return {};
        auto audited = m_audit.append({proposal.proposedBy,
                                       QStringLiteral("compensation.propose"),
                                       target(row->id),
                                       {},
                                       compact(stateOf(*row)),
                                       proposal.reason,
                                       {}});
        if (!audited)
            return audited.error();
        return {};
    });
    if (!done)
        return done.error();
    if (outcome.created)
        publish(streamevent::CompensationProposed, outcome.compensation, compensationKindName(proposal.kind),
                proposal.proposedBy, proposal.reason);
    return outcome;
}

void CompensationService::publish(const QString &kind, const Compensation &c, const QString &value,
                                  const QString &actor, const QString &reason) const
{
    if (!m_events)
        return;
    QJsonObject detail{{QStringLiteral("id"), c.id},
                       {QStringLiteral("order_no"), c.orderNo},
                       {QStringLiteral("kind"), compensationKindName(c.kind)}};
    if (value == u"executed")
        detail.insert(QStringLiteral("result"), c.result);
    m_events({kind, target(c.id), value, actor, reason, detail});
}

Result<DecisionOutcome> CompensationService::approve(qint64 id, const QString &approver, const QString &reason,
                                                     qint64 nowMs)
{
    return decide(id, true, approver, reason, nowMs);
}

Result<DecisionOutcome> CompensationService::reject(qint64 id, const QString &approver, const QString &reason,
                                                    qint64 nowMs)
{
    return decide(id, false, approver, reason, nowMs);
}

Result<DecisionOutcome> CompensationService::decide(qint64 id, bool approve, const QString &actor,
                                                    const QString &reason, qint64 nowMs)
{
    if (actor.isEmpty() || reason.isEmpty())
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("a decision needs an actor and a reason"));
    DecisionOutcome outcome;
    auto done = m_store.inTransaction([&](CompensationTransaction &tx) -> Result<void> {
        outcome = {};
        auto found = tx.find(id);
        if (!found)
            return found.error();
        if (!found.value())
            return notFound(id);
        Compensation before = *found.value();
        if (before.proposedBy == actor && !mutants::isOn(mutants::Mutant::ApproveOwnProposal)) {
            return Error::make(ErrorCode::FourEyes,
                               QStringLiteral("%1 proposed compensation %2 and cannot decide it").arg(actor).arg(id),
                               QStringLiteral("the proposer cannot approve or reject their own proposal"));
        }
        auto decided = tx.decide(id, approve ? QStringLiteral("approved") : QStringLiteral("rejected"), actor, reason,
                                 nowMs);
        if (!decided)
            return decided.error();
        if (!decided.value())
            return sameDecisionAgain(tx, id, approve, outcome);
        auto decidedAudit = m_audit.append(
            {actor,
             approve ? QStringLiteral("compensation.approve") : QStringLiteral("compensation.reject"),
             target(id),
             compact(stateOf(before)),
             {},
             reason,
             {}});
        if (!decidedAudit)
            return decidedAudit.error();
        outcome.decidedNow = true;
        if (approve) {
            if (auto executed = executeApproved(tx, before, actor, reason, nowMs); !executed)
                return executed.error();
        }
        auto after = tx.find(id);
        if (!after)
            return after.error();
        if (!after.value())
            return notFound(id);
        outcome.compensation = *after.value();
        return {};
    });
    if (!done)
        return done.error();
    if (outcome.decidedNow) {
        publish(streamevent::CompensationDecided, outcome.compensation,
                approve ? QStringLiteral("approved") : QStringLiteral("rejected"), actor, reason);
        if (outcome.compensation.status == u"executed")
            publish(streamevent::CompensationDecided, outcome.compensation, QStringLiteral("executed"), actor, reason);
    }
    return outcome;
}

/// Somebody decided first: the same decision again is a no-op (outcome holds the row), the
/// other one a conflict.
Result<void> CompensationService::sameDecisionAgain(CompensationTransaction &tx, qint64 id, bool approve,
                                                    DecisionOutcome &outcome)
{
    auto now = tx.find(id);
    if (!now)
        return now.error();
    if (!now.value())
        return notFound(id);
    outcome.compensation = *now.value();
    const QString &status = outcome.compensation.status;
    const bool same = approve ? status != QStringLiteral("rejected") : status == QStringLiteral("rejected");
    if (!same) {
        return Error::make(ErrorCode::Conflict, QStringLiteral("compensation %1 is already %2").arg(id).arg(status));
    }
    return {};
}

/// An approval carried out in its own transaction: the kind's effect, the row executed with
/// its result, audited.
Result<void> CompensationService::executeApproved(CompensationTransaction &tx, const Compensation &before,
                                                  const QString &actor, const QString &reason, qint64 nowMs)
{
    const qint64 id = before.id;
    auto carried = carryOut(tx, before, nowMs);
    if (!carried)
        return carried.error();
    const QJsonObject result = carried.value();
    auto executed = tx.markExecuted(id, result, nowMs);
    if (!executed)
        return executed.error();
    if (!executed.value())
        return Error::make(ErrorCode::Conflict, QStringLiteral("compensation %1 left approved").arg(id));
    auto executedAudit = m_audit.append({actor,
                                         QStringLiteral("compensation.execute"),
                                         target(id),
                                         QStringLiteral("{\"status\":\"approved\"}"),
                                         compact(QJsonObject{{QStringLiteral("status"), QStringLiteral("executed")},
                                                             {QStringLiteral("result"), result}}),
                                         reason,
                                         {}});
    if (!executedAudit)
        return executedAudit.error();
    return {};
}

} // namespace payonce::core
