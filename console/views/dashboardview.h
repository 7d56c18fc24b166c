#pragma once

#include "console/models/ratehistory.h"
#include "shared/streammessage.h"

#include <QMap>
#include <QTimer>
#include <QWidget>

class QHBoxLayout;
class QLabel;

namespace payonce::console {

class AgentClient;
class LayerTotalsModel;
class RateChart;
class TablePanel;

/// What is caught where, live: the per-layer rate chart of the last five minutes, the
/// per-layer totals, requests and latency, outbox backlog, Redis and the breaker lights.
/// Fed by the stream (applyMessage) and, for the outbox, by a poll of GET /api/v1/outbox
/// every few seconds; the chart is redrawn at most four times a second whatever the rate
/// of messages.
class DashboardView : public QWidget {
    Q_OBJECT
public:
    /// `client` may be null (no outbox poll).
    explicit DashboardView(AgentClient *client, QWidget *parent = nullptr);
    ~DashboardView() override;

    void applyMessage(const payonce::StreamMessage &message);
    /// Plots the history now instead of at the next redraw tick.
    void redrawChart();
    /// Forgets the plotted history (another agent: its rates are not this one's).
    void clearHistory();
    bool saveChartPng(const QString &fileName);

    const RateHistory &history() const { return m_history; }
    RateChart *chart() const { return m_chart; }
    LayerTotalsModel *layerTotals() const { return m_totals; }

public Q_SLOTS:
    void refreshOutbox();

private:
    void applyMetrics(const StreamMetrics &metrics, const QDateTime &at);
    void showBreakerStates(const QMap<QString, QString> &states);
    QLabel *addFigure(const QString &name, const QString &title);

    AgentClient *m_client;
    RateHistory m_history;
    LayerTotalsModel *m_totals;
    RateChart *m_chart;
    TablePanel *m_totalsPanel;
    QMap<QString, QLabel *> m_figures;
    QHBoxLayout *m_figureRow;
    QHBoxLayout *m_lights;
    QMap<QString, QLabel *> m_lightLabels;
    QTimer m_redrawTimer;
    bool m_chartDirty = false;
    int m_outboxInFlight = 0;
};

} // namespace payonce::console
