#pragma once

#include "core/compensationservice.h"
#include "core/finding.h"
#include "core/ports/patrolstore.h"

#include <QList>

namespace payonce::core {

/// The reconciliation patrol (design.md, "Outbox and patrol"), run on a timer or on
/// demand. It compares every PAID order's effects with what it is owed — stock_log per
/// item with the item's qty, exactly one active coupon of the reward template and nothing
/// else active, net points equal to reward_points — however the rows got there, and
/// raises `effect_mismatch` (subject "order:<order_no>", evidence expected vs found) and
/// `missing_outbox` (no "order.paid" outbox row). Findings are upserted on (kind,
/// subject); open ones of these kinds not seen in this run are resolved. A remedy is
/// proposed as "system:patrol": extra coupons → freeze_coupon, extra points →
/// reverse_points, each with a dedup_key naming the rows it answers, so a second run does
/// not propose again. Stock mismatches are reported, not proposed (an operator decides).
class Patrol {
public:
    static constexpr int kPageSize = 200;

    Patrol(PatrolStore &store, CompensationService &compensations) : m_store(store), m_compensations(compensations) {}

    /// One pass at `nowMs` (which must grow from run to run): the findings of this run.
    Result<QList<StoredFinding>> runOnce(qint64 nowMs);

private:
    PatrolStore &m_store;
    CompensationService &m_compensations;
};

} // namespace payonce::core
