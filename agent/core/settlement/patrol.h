#pragma once

#include "core/common/channel.h"
#include "core/ports/eventsink.h"
#include "core/ports/patrolstore.h"
#include "core/settlement/compensationservice.h"
#include "core/settlement/finding.h"

#include <QList>

#include <functional>

namespace payonce::core {

class AuditWriter;
class CallbackModeStore;
class CallbackPipeline;
class PaymentGateway;

struct PatrolOptions {
    /// An order in PAYING longer than this is asked about at its platform; 0: never.
    qint64 stuckPayingAfterMs = 5 * 60 * 1000;
    /// An `accepted` callback row older than this is a finding; 0: never.
    qint64 stuckAcceptedAfterMs = 5 * 60 * 1000;
};

/// What the patrol needs to act on orders stuck in PAYING. Without it (or with a part
/// missing) they are reported as findings and left as they are.
struct PatrolSettlement {
    std::function<PaymentGateway *(Channel)> gateways; ///< behind their breakers; null: channel not offered
    CallbackPipeline *callbacks = nullptr;             ///< settleConfirmed: the callback path's transaction
    CallbackModeStore *modes = nullptr;                ///< accept-only: nothing is settled or reverted
    AuditWriter *audit = nullptr;                      ///< every finish and revert, as "system:patrol"
};

/// The reconciliation patrol (docs/design.md, "Outbox and patrol"), run on a timer or on
/// demand. It compares every PAID order's effects with what it is owed — stock_log per
/// item with the item's qty, exactly one active coupon of the reward template and nothing
/// else active, net points equal to reward_points — however the rows got there, and
/// raises `effect_mismatch` (subject "order:<order_no>", evidence expected vs found) and
/// `missing_outbox` (no "order.paid" outbox row). Findings are upserted on (kind,
/// subject); open ones of these kinds not seen in this run are resolved. A remedy is
/// proposed as "system:patrol": extra coupons → freeze_coupon, extra points →
/// reverse_points, each with a dedup_key naming the rows it answers, so a second run does
/// not propose again. Stock mismatches are reported, not proposed (an operator decides).
///
/// Orders in PAYING past options.stuckPayingAfterMs (`stuck_paying`, subject
/// "order:<order_no>"): each open attempt is queried at its platform. Paid → finished
/// through CallbackPipeline::settleConfirmed, the callback path's own L4/L3/L5 and
/// side-effect keys, so a late callback racing it changes nothing twice. Not paid
/// anywhere → every attempt's trade is closed at the platform first (a close that finds
/// it paid after all settles it instead), then the attempts fail under fresh payment_nos
/// and the order reverts to PENDING, so the user can pay again. Anything unclear (no
/// gateway, a query that fails, a refunded trade, accept-only mode) leaves the order as
/// it is; the finding's evidence says why. `accepted` callback rows past
/// options.stuckAcceptedAfterMs are `stuck_accepted` findings (subject
/// "<channel>:<pay_no>"), except in accept-only mode, where waiting is their purpose.
///
/// Processed payments that do not match their order (subject "<channel>:<pay_no>", the
/// callback path's own subject, so a finding it raised is seen again rather than doubled):
/// paid by another pay_no or after the order closed → `double_payment` and a refund of
/// that payment proposed (dedup "patrol:refund:<channel>:<pay_no>"); another amount →
/// `amount_mismatch`, for an operator. A double payment refunded in full is no longer
/// found, and its finding resolves; an amount_mismatch is not resolved by the patrol (the
/// callback path raises them for rejected notifications it never logs).
class Patrol {
public:
    static constexpr int kPageSize = 200;

    /// events gets finding.raised for each finding a run raises for the first time.
    Patrol(PatrolStore &store, CompensationService &compensations, PatrolOptions options = {},
           PatrolSettlement settlement = {}, EventSink events = {})
        : m_store(store), m_compensations(compensations), m_options(options), m_settlement(std::move(settlement)),
          m_events(std::move(events))
    {
    }

    /// One pass at `nowMs` (which must grow from run to run): the findings of this run.
    Result<QList<StoredFinding>> runOnce(qint64 nowMs);

private:
    Result<void> checkPaidOrders(qint64 nowMs, QList<StoredFinding> &found);
    Result<void> checkStuckPaying(qint64 nowMs, bool acceptOnly, QList<StoredFinding> &found);
    Result<void> checkStuckAccepted(qint64 nowMs, QList<StoredFinding> &found);
    Result<void> checkPaymentAnomalies(qint64 nowMs, QList<StoredFinding> &found);
    QJsonObject settleStuckOrder(const StuckPayingOrder &order, bool acceptOnly, qint64 nowMs);

    PatrolStore &m_store;
    CompensationService &m_compensations;
    PatrolOptions m_options;
    PatrolSettlement m_settlement;
    EventSink m_events;
};

} // namespace payonce::core
