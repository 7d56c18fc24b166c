#include "qaview.h"

#include "tablepanel.h"

#include "console/models/codelabels.h"
#include "console/models/qarunsmodel.h"
#include "console/models/scenarioreportmodel.h"
#include "console/models/scenariorequest.h"
#include "console/models/scenariotext.h"
#include "console/net/agentclient.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

// The runs an operator compares; older ones stay in the agent's database.
constexpr int kRunsShown = 200;

} // namespace

QaView::QaView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_runs(new QaRunsModel(this)), m_report(new ScenarioReportModel(this))
{
    setObjectName(QStringLiteral("qaView"));
    m_runs->setObjectName(QStringLiteral("qaRunsModel"));
    m_report->setObjectName(QStringLiteral("scenarioReportModel"));

    auto *top = new QHBoxLayout;
    top->addWidget(buildForm());
    top->addWidget(buildOutcome(), 1);

    m_runsPanel = new TablePanel(QStringLiteral("qaRuns"), m_runs, this);
    connect(m_runsPanel->table()->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        const QString id =
            m_runs->rowObject(m_runsPanel->currentSourceRow()).value(QStringLiteral("scenario_id")).toString();
        if (!id.isEmpty() && id != m_shown)
            showScenario(id);
    });
    auto *runsBox = new QGroupBox(tr("Past runs (select one for its report)"), this);
    auto *runsLayout = new QVBoxLayout(runsBox);
    auto *refreshButton = new QPushButton(tr("Refresh"), runsBox);
    refreshButton->setObjectName(QStringLiteral("refreshQaRuns"));
    connect(refreshButton, &QPushButton::clicked, this, &QaView::refresh);
    runsLayout->addWidget(m_runsPanel, 1);
    runsLayout->addWidget(refreshButton, 0, Qt::AlignLeft);

    auto *upper = new QWidget(this);
    upper->setLayout(top);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(upper);
    splitter->addWidget(runsBox);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(splitter);
    updatePlan();
}

QaView::~QaView() = default;

QWidget *QaView::buildForm()
{
    auto *box = new QGroupBox(tr("Start a scenario"), this);
    m_kind = new QComboBox(box);
    m_kind->setObjectName(QStringLiteral("scenarioKind"));
    for (const QString &kind : ScenarioRequest::kinds())
        m_kind->addItem(scenarioKindLabel(kind), kind);
    const ScenarioRequest defaults;
    const auto spin = [box](const char *name, int low, int high, int value) {
        auto *spinBox = new QSpinBox(box);
        spinBox->setObjectName(QLatin1String(name));
        spinBox->setRange(low, high);
        spinBox->setValue(value);
        return spinBox;
    };
    // The agent's limits (docs/openapi.yaml): it refuses anything else, naming the field.
    m_orders = spin("scenarioOrders", 1, 10000, defaults.orders);
    m_duplicates = spin("scenarioDuplicates", 1, 100, defaults.duplicates);
    m_concurrency = spin("scenarioConcurrency", 1, 64, defaults.concurrency);
    m_timeScale = new QDoubleSpinBox(box);
    m_timeScale->setObjectName(QStringLiteral("scenarioTimeScale"));
    m_timeScale->setDecimals(4);
    m_timeScale->setRange(0.0001, 10.0);
    m_timeScale->setSingleStep(0.001);
    m_timeScale->setValue(defaults.timeScale);
    m_timeScale->setToolTip(tr("The platform's retry schedule (15 s, 15 s, 30 s, 3 min, …) multiplied by this"));
    m_targets = new QLineEdit(box);
    m_targets->setObjectName(QStringLiteral("scenarioTargets"));
    m_targets->setPlaceholderText(tr("the connected agent"));
    m_targets->setToolTip(tr("Agent URLs separated by commas; the scenario's requests are spread over them"));
    auto *layers = new QHBoxLayout;
    for (const QString &layer : ScenarioRequest::switchableLayers()) {
        auto *check = new QCheckBox(layerLabel(layer), box);
        check->setObjectName(QStringLiteral("disableLayer_") + layer);
        connect(check, &QCheckBox::toggled, this, &QaView::updatePlan);
        layers->addWidget(check);
        m_layerSwitches.insert(layer, check);
    }
    m_reason = new QLineEdit(box);
    m_reason->setObjectName(QStringLiteral("scenarioReason"));
    m_reason->setPlaceholderText(tr("Why (ticket, release, …) — recorded in the audit log"));
    m_plan = new QLabel(box);
    m_plan->setObjectName(QStringLiteral("scenarioPlan"));
    m_plan->setWordWrap(true);
    m_start = new QPushButton(tr("Start scenario"), box);
    m_start->setObjectName(QStringLiteral("startScenario"));
    connect(m_start, &QPushButton::clicked, this, &QaView::startScenario);
    m_result = new QLabel(box);
    m_result->setObjectName(QStringLiteral("scenarioResult"));
    m_result->setWordWrap(true);
    for (QSpinBox *spinBox : {m_orders, m_duplicates, m_concurrency})
        connect(spinBox, &QSpinBox::valueChanged, this, &QaView::updatePlan);
    connect(m_timeScale, &QDoubleSpinBox::valueChanged, this, &QaView::updatePlan);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &QaView::updatePlan);
    connect(m_targets, &QLineEdit::textChanged, this, &QaView::updatePlan);
    connect(m_reason, &QLineEdit::textChanged, this, &QaView::updatePlan);

    auto *form = new QFormLayout(box);
    form->addRow(tr("Kind"), m_kind);
    form->addRow(tr("Orders"), m_orders);
    form->addRow(tr("Duplicates"), m_duplicates);
    form->addRow(tr("Concurrency"), m_concurrency);
    form->addRow(tr("Time scale"), m_timeScale);
    form->addRow(tr("Target agents"), m_targets);
    form->addRow(tr("Switch off"), layers);
    form->addRow(tr("Reason"), m_reason);
    form->addRow(m_plan);
    form->addRow(m_start);
    form->addRow(m_result);
    return box;
}

QWidget *QaView::buildOutcome()
{
    auto *box = new QGroupBox(tr("Scenario"), this);
    m_progress = new QLabel(tr("No scenario yet."), box);
    m_progress->setObjectName(QStringLiteral("scenarioProgress"));
    m_progress->setWordWrap(true);
    m_progressBar = new QProgressBar(box);
    m_progressBar->setObjectName(QStringLiteral("scenarioProgressBar"));
    m_progressBar->setRange(0, 100);
    m_progressBar->setValue(0);
    m_verdict = new QLabel(box);
    m_verdict->setObjectName(QStringLiteral("scenarioVerdict"));
    QFont font = m_verdict->font();
    font.setPointSizeF(font.pointSizeF() * 1.8);
    font.setBold(true);
    m_verdict->setFont(font);
    m_details = new QLabel(box);
    m_details->setObjectName(QStringLiteral("scenarioDetails"));
    m_details->setWordWrap(true);
    auto *reportPanel = new TablePanel(QStringLiteral("scenarioReport"), m_report, box);
    auto *layout = new QVBoxLayout(box);
    layout->addWidget(m_progress);
    layout->addWidget(m_progressBar);
    layout->addWidget(m_verdict);
    layout->addWidget(m_details);
    layout->addWidget(reportPanel, 1);
    return box;
}

ScenarioRequest QaView::request() const
{
    ScenarioRequest request;
    request.kind = m_kind->currentData().toString();
    request.orders = m_orders->value();
    request.duplicates = m_duplicates->value();
    request.concurrency = m_concurrency->value();
    request.timeScale = m_timeScale->value();
    for (const QString &target : m_targets->text().split(u',', Qt::SkipEmptyParts)) {
        QString url = target.trimmed();
        while (url.endsWith(u'/'))
            url.chop(1);
        if (!url.isEmpty())
            request.targets.append(url);
    }
    for (auto it = m_layerSwitches.cbegin(); it != m_layerSwitches.cend(); ++it) {
        if (it.value()->isChecked())
            request.disableLayers.append(it.key());
    }
    request.reason = m_reason->text();
    return request;
}

void QaView::updatePlan()
{
    const ScenarioRequest planned = request();
    m_plan->setText(planned.plan());
    // Every action of the console takes a reason.
    m_start->setEnabled(!planned.reason.trimmed().isEmpty());
}

void QaView::refresh()
{
    if (m_client->agentUrl().isEmpty())
        return;
    if (m_targets->text().trimmed().isEmpty())
        m_targets->setText(m_client->agentUrl().toString(QUrl::StripTrailingSlash));
    m_listInFlight = true;
    m_client->get(QStringLiteral("/api/v1/qa/scenarios?limit=%1").arg(kRunsShown), this,
                  [this](const ApiResult &result) {
                      m_listInFlight = false;
                      if (!result.ok())
                          return;
                      m_runs->setRuns(result.json.array());
                      if (!m_shown.isEmpty())
                          m_runsPanel->selectSourceRow(m_runs->rowOf(m_shown));
                  });
}

void QaView::startScenario()
{
    const ScenarioRequest planned = request();
    if (planned.reason.trimmed().isEmpty()) {
        m_result->setText(tr("Type a reason first."));
        return;
    }
    m_start->setEnabled(false);
    m_result->setText(tr("Starting %1…").arg(planned.kind));
    m_client->post(QStringLiteral("/api/v1/qa/scenarios"), planned.toJson(), this, [this](const ApiResult &result) {
        updatePlan();
        if (!result.ok()) {
            m_result->setText(result.error.describe());
            return;
        }
        const QString id = result.json.object().value(QStringLiteral("scenario_id")).toString();
        m_result->setText(tr("Started %1.").arg(id));
        m_shown = id;
        m_report->setReport({});
        m_verdict->clear();
        m_details->clear();
        m_progress->setText(tr("%1: starting").arg(id));
        m_progressBar->setValue(0);
        refresh();
    });
}

void QaView::applyMessage(const StreamMessage &message)
{
    if (std::holds_alternative<StreamSnapshot>(message.body)) {
        // A stream (re)connected: what happened while it was down (a run that ended, or
        // was written down abandoned after its agent died) came in no event, so the list
        // and the shown run are fetched once. No clock of its own: a run whose agent died
        // is written down, and announced, by the agent that finds its lease run out.
        if (!m_listInFlight)
            refresh();
        if (!m_shown.isEmpty())
            showScenario(m_shown);
        return;
    }
    const auto *event = std::get_if<StreamEvent>(&message.body);
    if (!event || event->kind != streamevent::ScenarioProgress)
        return;
    const QJsonObject progress = QJsonDocument::fromJson(event->value.toUtf8()).object();
    // A run started elsewhere (another console, a script): one fetch lists it, however
    // many of its events arrive before the answer.
    if (!m_runs->applyProgress(event->subject, progress) && !m_listInFlight)
        refresh();
    // A run started elsewhere is followed too, unless the one shown is still running.
    const bool shownRunning = m_report->report().isEmpty() && shownIsRunning();
    if (event->subject != m_shown && shownRunning)
        return;
    if (event->subject != m_shown) {
        m_shown = event->subject;
        m_report->setReport({});
        m_verdict->clear();
        m_details->clear();
    }
    showProgress(progress);
    if (isFinalScenarioPhase(progress.value(QStringLiteral("phase")).toString()))
        showScenario(m_shown);
}

void QaView::showScenario(const QString &scenarioId)
{
    m_shown = scenarioId;
    m_client->get(QStringLiteral("/api/v1/qa/scenarios/") + QString::fromUtf8(QUrl::toPercentEncoding(scenarioId)),
                  this, [this, scenarioId](const ApiResult &result) {
                      if (!result.ok() || scenarioId != m_shown)
                          return;
                      showRun(result.json.object());
                  });
}

void QaView::showRun(const QJsonObject &run)
{
    showProgress(run.value(QStringLiteral("progress")).toObject());
    const QJsonObject report = run.value(QStringLiteral("report")).toObject();
    m_report->setReport(report);
    const QString status = run.value(QStringLiteral("status")).toString();
    if (status == u"abandoned") {
        m_verdict->setText(abandonedInWords(run));
        m_verdict->setStyleSheet(QStringLiteral("color: %1").arg(scenarioStatusColor(status).name()));
        m_details->setText(tr("No report: the run ended with its agent."));
        QJsonObject progress = run.value(QStringLiteral("progress")).toObject();
        progress.insert(QStringLiteral("phase"), status);
        progress.insert(QStringLiteral("agent_id"), run.value(QStringLiteral("agent_id")));
        m_runs->applyProgress(m_shown, progress);
        return;
    }
    if (report.isEmpty()) {
        m_verdict->clear();
        m_details->clear();
        return;
    }
    const ScenarioVerdict verdict = scenarioVerdict(report);
    m_verdict->setText(verdict.headline);
    m_verdict->setStyleSheet(
        QStringLiteral("color: %1")
            .arg(scenarioStatusColor(verdict.passed ? QStringLiteral("passed") : QStringLiteral("failed")).name()));
    m_details->setText(verdict.details);
    m_runs->applyProgress(m_shown, run.value(QStringLiteral("progress")).toObject());
}

bool QaView::shownIsRunning() const
{
    return !m_shown.isEmpty()
           && m_runs->rowObject(m_runs->rowOf(m_shown)).value(QStringLiteral("status")).toString() == u"running";
}

void QaView::showProgress(const QJsonObject &progress)
{
    m_progress->setText(m_shown + QStringLiteral(" — ") + describeProgress(progress));
    m_progressBar->setValue(progressPercent(progress));
}

} // namespace payonce::console
