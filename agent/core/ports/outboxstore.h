#pragma once

#include "core/common/result.h"
#include "core/outbox/outboxevent.h"

#include <QList>
#include <QString>

#include <functional>
#include <optional>

namespace payonce::core {

/// The outbox table, as dispatchers and the operator API see it (docs/design.md, "Outbox and
/// patrol"). Thread-safe; every call is its own short transaction on the calling thread.
///
/// Claims are leases: claim() marks up to `limit` due rows (pending, next_attempt_at <= now,
/// and unclaimed or with a claim whose claimed_until has passed — a dispatcher that died)
/// as claimed by `dispatcherId` until `claimedUntilMs`, in one transaction, so that two
/// dispatchers never hold a claim on one row at the same time (PostgreSQL and MariaDB:
/// SELECT … FOR UPDATE SKIP LOCKED then UPDATE; SQLite: the single writer).
class OutboxStore {
public:
    virtual ~OutboxStore() = default;

    /// Claims a batch, oldest id first. An empty list means nothing is due now.
    virtual Result<QList<OutboxEvent>> claim(const QString &dispatcherId, int limit, qint64 nowMs,
                                             qint64 claimedUntilMs) = 0;

    /// Records the outcomes of a claimed batch in one transaction and clears the claims.
    /// Only rows still pending and claimed by `dispatcherId` change (a dispatcher whose
    /// lease expired and whose rows another dispatcher reclaimed changes nothing); returns
    /// how many outcomes were applied.
    virtual Result<int> complete(const QString &dispatcherId, const QList<OutboxOutcome> &outcomes, qint64 nowMs) = 0;

    /// Rows with `status` (every status when nullopt), newest first, at most `limit`
    /// (GET /api/v1/outbox).
    virtual Result<QList<OutboxEvent>> list(std::optional<OutboxStatus> status, int limit) = 0;

    /// Runs inside redrive()'s transaction with the event before and after: its error rolls
    /// the redrive back. The operator API writes its audit entry here, so a redrive is
    /// never without its audit line (an AuditWriter on the same thread joins the transaction).
    using RedriveHook = std::function<Result<void>(const OutboxEvent &before, const OutboxEvent &after)>;

    /// Puts a dead event back to pending, due now, attempts reset to 0 and marked redriven;
    /// last_error is kept (it says why it died). NotFound for an unknown id, Conflict for an
    /// event that is not dead (nothing written, the hook not called). The reason belongs in
    /// the audit trail: the caller writes it through `hook`.
    virtual Result<OutboxEvent> redrive(qint64 id, qint64 nowMs, const RedriveHook &hook) = 0;
    Result<OutboxEvent> redrive(qint64 id, qint64 nowMs) { return redrive(id, nowMs, RedriveHook()); }
};

} // namespace payonce::core
