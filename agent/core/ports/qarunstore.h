#pragma once

#include "core/common/result.h"
#include "core/ports/scenarioreport.h"

#include <QList>
#include <QString>

#include <optional>

namespace payonce::core {

/// One row of qa_runs.
struct QaRun {
    QString scenarioId;
    QString kind;
    QString params;   ///< JSON text (ScenarioParams::toJson)
    QString status;   ///< running | passed | failed | error | abandoned
    QString progress; ///< JSON text, may be empty
    QString report;   ///< JSON text once finished, else empty
    QString startedBy;
    qint64 startedAt = 0;
    qint64 finishedAt = 0; ///< 0 while running; an abandoned run's: when its lease ended
    QString agentId;       ///< the instance id of the agent that runs (ran) it
    qint64 leaseUntil = 0; ///< the agent renews it while the run lasts; past it, the run is abandoned
};

/// qa_runs, and what a scenario needs to read or nudge in the database: the invariant
/// report over the scenario's orders (every order_no starting with `orderPrefix`), the
/// outbox of those orders. Thread-safe.
///
/// A run is leased to the agent that runs it (QaRun::agentId, leaseUntil): the agent
/// renews the lease while the run lasts. Once the lease has run out — by the store's
/// clock, on whichever agent reads — the run is abandoned: list() and find() show it so
/// (finishedAt = leaseUntil), running() leaves it out, abandonExpired() writes it down,
/// and neither renewLease() nor finish() bring it back.
class QaRunStore {
public:
    virtual ~QaRunStore() = default;
    /// The row as given (status running, agentId and leaseUntil set).
    virtual Result<void> create(const QaRun &run) = 0;
    virtual Result<void> saveProgress(const QString &scenarioId, const QString &progress) = 0;
    /// The run's end, when it is still this agent's running run with its lease unexpired at
    /// nowMs; false (nothing written) when it is not: the run was abandoned meanwhile.
    virtual Result<bool> finish(const QString &scenarioId, const QString &agentId, const QString &status,
                                const QString &report, qint64 nowMs) = 0;
    /// lease_until = leaseUntil, when the run is still this agent's running run and its
    /// lease had not run out at nowMs; false (nothing written) otherwise: the lease is lost.
    virtual Result<bool> renewLease(const QString &scenarioId, const QString &agentId, qint64 nowMs,
                                    qint64 leaseUntil) = 0;
    /// Every running run whose lease ended before nowMs becomes abandoned (finished_at =
    /// lease_until): those runs, as they are now.
    virtual Result<QList<QaRun>> abandonExpired(qint64 nowMs) = 0;
    /// Newest first.
    virtual Result<QList<QaRun>> list(int limit) = 0;
    virtual Result<std::optional<QaRun>> find(const QString &scenarioId) = 0;
    /// Runs running with a live lease (a run whose agent died is not among them once its
    /// lease has run out, so its disable_layers no longer apply).
    virtual Result<QList<QaRun>> running() = 0;

    /// The invariant report (ScenarioReport; confirmLayers is not the store's), by SQL.
    virtual Result<ScenarioReport> report(const QString &orderPrefix) = 0;
    /// Scenario orders not yet PAID.
    virtual Result<qint64> unpaidOrders(const QString &orderPrefix) = 0;
    /// mq_redelivery: the delivered order.paid events of these orders back to pending, so
    /// the dispatchers deliver each a second time (the queue's redelivery). The count.
    virtual Result<qint64> redeliverOutboxEvents(const QString &orderPrefix, qint64 nowMs) = 0;
    /// Delivered order.paid events of these orders.
    virtual Result<qint64> deliveredOutboxEvents(const QString &orderPrefix) = 0;
};

} // namespace payonce::core
