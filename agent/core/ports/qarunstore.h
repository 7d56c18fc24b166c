#pragma once

#include "core/qascenario.h"
#include "core/result.h"

#include <QList>
#include <QString>

#include <optional>

namespace payonce::core {

/// One row of qa_runs.
struct QaRun {
    QString scenarioId;
    QString kind;
    QString params;   ///< JSON text (ScenarioParams::toJson)
    QString status;   ///< running | passed | failed | error
    QString progress; ///< JSON text, may be empty
    QString report;   ///< JSON text once finished, else empty
    QString startedBy;
    qint64 startedAt = 0;
    qint64 finishedAt = 0; ///< 0 while running
};

/// qa_runs, and what a scenario needs to read or nudge in the database: the invariant
/// report over the scenario's orders (every order_no starting with `orderPrefix`), the
/// outbox of those orders. Thread-safe.
class QaRunStore {
public:
    virtual ~QaRunStore() = default;
    virtual Result<void> create(const QaRun &run) = 0;
    virtual Result<void> saveProgress(const QString &scenarioId, const QString &progress) = 0;
    virtual Result<void> finish(const QString &scenarioId, const QString &status, const QString &report,
                                qint64 finishedAt) = 0;
    /// Newest first.
    virtual Result<QList<QaRun>> list(int limit) = 0;
    virtual Result<std::optional<QaRun>> find(const QString &scenarioId) = 0;
    /// Runs still marked running (an agent that died mid-run leaves one; see
    /// ScenarioRunner's start).
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
