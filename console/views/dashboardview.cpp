#include "dashboardview.h"

#include "ratechart.h"
#include "tablepanel.h"

#include "console/models/codelabels.h"
#include "console/models/layercolors.h"
#include "console/models/layertotalsmodel.h"
#include "console/net/agentclient.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

constexpr int kRedrawMs = 250;
constexpr int kOutboxCountLimit = 1000; // the API's largest page; more shows as "1000+"

QString milliseconds(double ms)
{
    return QStringLiteral("%1 ms").arg(QLocale().toString(ms, 'f', 1));
}

} // namespace

DashboardView::DashboardView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_totals(new LayerTotalsModel(this)), m_chart(new RateChart(this)),
      m_figureRow(new QHBoxLayout), m_lights(new QHBoxLayout)
{
    setObjectName(QStringLiteral("dashboardView"));
    m_totals->setObjectName(QStringLiteral("layerTotalsModel"));
    m_chart->setObjectName(QStringLiteral("rateChart"));
    m_totalsPanel = new TablePanel(QStringLiteral("layerTotals"), m_totals, this);

    addFigure(QStringLiteral("requestsValue"), tr("Requests"));
    addFigure(QStringLiteral("p50Value"), tr("p50"));
    addFigure(QStringLiteral("p99Value"), tr("p99"));
    addFigure(QStringLiteral("outboxPendingValue"), tr("Outbox pending"));
    addFigure(QStringLiteral("outboxDeadValue"), tr("Outbox dead"));
    addFigure(QStringLiteral("redisValue"), tr("Redis"));

    auto *lightsBox = new QGroupBox(tr("Breakers"), this);
    lightsBox->setObjectName(QStringLiteral("breakerLights"));
    lightsBox->setLayout(m_lights);
    m_lights->addStretch(1);

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_chart);
    splitter->addWidget(m_totalsPanel);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({800, 400});

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(m_figureRow);
    layout->addWidget(lightsBox);
    layout->addWidget(splitter, 1);

    m_redrawTimer.setInterval(kRedrawMs);
    connect(&m_redrawTimer, &QTimer::timeout, this, [this] {
        if (m_chartDirty)
            redrawChart();
    });
    m_redrawTimer.start();
}

DashboardView::~DashboardView() = default;

QLabel *DashboardView::addFigure(const QString &name, const QString &title)
{
    auto *box = new QGroupBox(title, this);
    auto *value = new QLabel(QStringLiteral("–"), box);
    value->setObjectName(name);
    QFont font = value->font();
    font.setPointSizeF(font.pointSizeF() * 1.6);
    font.setBold(true);
    value->setFont(font);
    auto *boxLayout = new QVBoxLayout(box);
    boxLayout->addWidget(value);
    m_figureRow->addWidget(box);
    m_figures.insert(name, value);
    return value;
}

void DashboardView::applyMessage(const StreamMessage &message)
{
    if (const auto *snapshot = std::get_if<StreamSnapshot>(&message.body)) {
        // A new connection: the history of another connection's rates stays valid (same
        // agent, same clock), so only the figures are replaced.
        applyMetrics(snapshot->metrics, message.at);
    } else if (const auto *metrics = std::get_if<StreamMetrics>(&message.body)) {
        applyMetrics(*metrics, message.at);
    }
}

void DashboardView::applyMetrics(const StreamMetrics &metrics, const QDateTime &at)
{
    m_history.add(at, metrics.rates);
    m_chartDirty = true;
    m_totals->setMetrics(metrics);
    m_figures.value(QStringLiteral("requestsValue"))->setText(QLocale().toString(metrics.requests));
    // The agent's own counts ride on every metrics message once it could read them.
    if (metrics.outboxPending)
        m_figures.value(QStringLiteral("outboxPendingValue"))->setText(QLocale().toString(*metrics.outboxPending));
    if (metrics.outboxDead)
        m_figures.value(QStringLiteral("outboxDeadValue"))->setText(QLocale().toString(*metrics.outboxDead));
    m_figures.value(QStringLiteral("p50Value"))->setText(milliseconds(metrics.latencyP50Ms));
    m_figures.value(QStringLiteral("p99Value"))->setText(milliseconds(metrics.latencyP99Ms));
    QLabel *redis = m_figures.value(QStringLiteral("redisValue"));
    const QString redisText = metrics.redisDegraded ? tr("degraded") : tr("ok");
    // Style sheets are costly to apply: only on a change, not on every message.
    if (redis->text() != redisText) {
        redis->setText(redisText);
        redis->setStyleSheet(metrics.redisDegraded ? QStringLiteral("color: #d62728") : QString());
    }
    showBreakerStates(metrics.breakerStates);
}

void DashboardView::showBreakerStates(const QMap<QString, QString> &states)
{
    for (auto it = states.cbegin(); it != states.cend(); ++it) {
        QLabel *light = m_lightLabels.value(it.key());
        if (!light) {
            light = new QLabel(this);
            light->setObjectName(QStringLiteral("breakerLight_") + it.key());
            light->setTextFormat(Qt::RichText);
            m_lights->insertWidget(m_lights->count() - 1, light);
            m_lightLabels.insert(it.key(), light);
        }
        if (light->property("breakerState").toString() == it.value())
            continue;
        light->setText(QStringLiteral("<span style=\"color:%1; font-size:large\">&#9679;</span> %2: %3")
                           .arg(breakerStateColor(it.value()).name(), it.key().toHtmlEscaped(),
                                breakerStateLabel(it.value()).toHtmlEscaped()));
        light->setProperty("breakerState", it.value());
    }
}

void DashboardView::redrawChart()
{
    m_chartDirty = false;
    m_chart->showHistory(m_history);
}

void DashboardView::clearHistory()
{
    m_history.clear();
    redrawChart();
}

bool DashboardView::saveChartPng(const QString &fileName)
{
    redrawChart();
    return m_chart->savePng(fileName);
}

void DashboardView::refreshOutbox()
{
    if (!m_client || m_client->agentUrl().isEmpty() || m_outboxInFlight > 0)
        return;
    const QList<QPair<QString, QString>> counts{{QStringLiteral("pending"), QStringLiteral("outboxPendingValue")},
                                                {QStringLiteral("dead"), QStringLiteral("outboxDeadValue")}};
    for (const auto &[status, figure] : counts) {
        ++m_outboxInFlight;
        m_client->get(QStringLiteral("/api/v1/outbox?status=%1&limit=%2").arg(status).arg(kOutboxCountLimit), this,
                      [this, name = figure](const ApiResult &result) {
                          --m_outboxInFlight;
                          if (!result.ok())
                              return;
                          const qsizetype n = result.json.array().size();
                          m_figures.value(name)->setText(n >= kOutboxCountLimit ? QStringLiteral("%1+").arg(n)
                                                                                : QString::number(n));
                      });
    }
}

} // namespace payonce::console
