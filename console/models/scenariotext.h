#pragma once

#include <QJsonObject>
#include <QString>

namespace payonce::console {

/// What a QA scenario's JSON says, in the operator's words (docs/openapi.yaml, "QA scenarios"): no
/// widgets, so the QA view only shows these texts and the tests read the same ones.

/// "0 double effects", "1 double effect", "12 double effects".
QString doubleEffectsInWords(qint64 count);

/// The invariant report's verdict: "PASS" or "FAIL" and one line per invariant.
struct ScenarioVerdict {
    bool passed = false;
    QString headline; ///< "PASS — 0 double effects" or "FAIL — 1 double effect, 2 lost"
    QString details;  ///< orders, deliveries, paid once, missing effects, lost, outbox
};
ScenarioVerdict scenarioVerdict(const QJsonObject &report);

/// A progress object ({"phase","orders","created","confirmed","paid_at_sim",…}) as one
/// line: "retry_storm: 7 of 10 orders paid at the platform, 10 confirmed".
QString describeProgress(const QJsonObject &progress);
/// Paid at the platform out of the orders, 0…100 (0 for a progress without orders).
int progressPercent(const QJsonObject &progress);

/// A phase a run ends in (passed, failed, error; abandoned, which its agent never
/// reaches: another agent publishes it when the dead agent's lease has run out).
bool isFinalScenarioPhase(const QString &phase);

/// A run whose agent stopped renewing its lease (status abandoned), in words:
/// "ABANDONED — agent agent-2 stopped renewing its lease, which ended at 2026-…Z".
QString abandonedInWords(const QJsonObject &run);

} // namespace payonce::console
