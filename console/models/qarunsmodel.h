#pragma once

#include "jsontablemodel.h"

#include <QJsonArray>

namespace payonce::console {

/// GET /api/v1/qa/scenarios: the past and running QA scenarios, newest first. The
/// endpoint nests the parameters and the progress; this model lifts the fields an
/// operator compares runs by (orders, duplicates, disabled layers, phase) into columns.
/// A scenario.progress event updates its run's phase and status between two fetches.
class QaRunsModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit QaRunsModel(QObject *parent = nullptr);

    /// A fresh answer of the endpoint (non-objects skipped, missing fields left empty).
    void setRuns(const QJsonArray &runs);
    /// The row of a scenario, -1 when not listed.
    int rowOf(const QString &scenarioId) const;
    /// The progress a stream event carried; false when the run is not listed (fetch again).
    bool applyProgress(const QString &scenarioId, const QJsonObject &progress);

    /// One run of the endpoint with its nested fields lifted (also used for a single run).
    static QJsonObject flattened(const QJsonObject &run);

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

/// The colour of a run's status: passed green, failed and error red, running orange,
/// abandoned (its agent died) brown.
QColor scenarioStatusColor(const QString &status);

} // namespace payonce::console
