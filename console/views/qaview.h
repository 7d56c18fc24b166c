#pragma once

#include "shared/streammessage.h"

#include <QMap>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace payonce::console {

class AgentClient;
class QaRunsModel;
class ScenarioReportModel;
class TablePanel;
struct ScenarioRequest;

/// QA scenarios (docs/openapi.yaml, "POST /api/v1/qa/scenarios"): a form to start one (kind, orders,
/// duplicates, concurrency, time scale, target agents — the connected one by default —,
/// layers to switch off, a reason), the running scenario's progress from the stream's
/// scenario.progress events, its invariant report once it ends (PASS/FAIL, the double
/// effects in words, the hits by layer in the layers' colours), and the past runs. The
/// dashboard shows the same storm live. Selecting a past run shows its report.
/// Object names: "scenarioKind", "scenarioOrders", "scenarioDuplicates",
/// "scenarioConcurrency", "scenarioTimeScale", "scenarioTargets", "disableLayer_<layer>",
/// "scenarioReason", "scenarioPlan", "startScenario", "scenarioResult", "scenarioProgress",
/// "scenarioProgressBar", "scenarioVerdict", "scenarioDetails", panels "scenarioReport"
/// and "qaRuns".
class QaView : public QWidget {
    Q_OBJECT
public:
    explicit QaView(AgentClient *client, QWidget *parent = nullptr);
    ~QaView() override;

    QaRunsModel *runs() const { return m_runs; }
    ScenarioReportModel *report() const { return m_report; }
    /// The scenario whose progress and report are shown; empty before any.
    QString shownScenario() const { return m_shown; }
    ScenarioRequest request() const;
    void applyMessage(const payonce::StreamMessage &message);

public Q_SLOTS:
    void refresh();
    void startScenario();
    /// Fetches one run and shows its progress, and its report when it has one.
    void showScenario(const QString &scenarioId);

private:
    QWidget *buildForm();
    QWidget *buildOutcome();
    void showProgress(const QJsonObject &progress);
    void showRun(const QJsonObject &run);
    bool shownIsRunning() const;
    void updatePlan();

    AgentClient *m_client;
    QaRunsModel *m_runs;
    ScenarioReportModel *m_report;
    TablePanel *m_runsPanel = nullptr;
    QComboBox *m_kind = nullptr;
    QSpinBox *m_orders = nullptr;
    QSpinBox *m_duplicates = nullptr;
    QSpinBox *m_concurrency = nullptr;
    QDoubleSpinBox *m_timeScale = nullptr;
    QLineEdit *m_targets = nullptr;
    QMap<QString, QCheckBox *> m_layerSwitches;
    QLineEdit *m_reason = nullptr;
    QLabel *m_plan = nullptr;
    QPushButton *m_start = nullptr;
    QLabel *m_result = nullptr;
    QLabel *m_progress = nullptr;
    QProgressBar *m_progressBar = nullptr;
    QLabel *m_verdict = nullptr;
    QLabel *m_details = nullptr;
    QString m_shown;
    bool m_listInFlight = false;
};

} // namespace payonce::console
