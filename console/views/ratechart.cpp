#include "ratechart.h"

#include "qcustomplot_include.h"

#include "console/models/codelabels.h"
#include "console/models/layercolors.h"
#include "console/models/ratehistory.h"

#include <QVBoxLayout>

namespace payonce::console {

RateChart::RateChart(QWidget *parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    m_plot->setObjectName(QStringLiteral("ratePlot"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    for (Layer layer : allLayers) {
        QCPGraph *graph = m_plot->addGraph();
        graph->setName(layerLabel(layer));
        // A cosmetic one-pixel line without antialiasing: a storm's jagged rates stroked
        // wide and smooth cost seconds per replot on the raster engine.
        QPen pen(layerColor(layer), 1);
        pen.setCosmetic(true);
        graph->setPen(pen);
        graph->setAntialiased(false);
    }
    QSharedPointer<QCPAxisTickerDateTime> ticker(new QCPAxisTickerDateTime);
    ticker->setDateTimeFormat(QStringLiteral("HH:mm:ss"));
    ticker->setDateTimeSpec(Qt::UTC);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setLabel(tr("time (UTC)"));
    m_plot->yAxis->setLabel(tr("caught per second"));
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignLeft | Qt::AlignTop);
    setMinimumHeight(220);
}

void RateChart::showHistory(const RateHistory &history)
{
    double highest = 1.0;
    for (std::size_t l = 0; l < allLayers.size(); ++l) {
        QVector<QCPGraphData> points;
        points.reserve(history.size());
        for (int i = 0; i < history.size(); ++i) {
            const RateHistory::Sample &sample = history.at(i);
            points.append(QCPGraphData(double(sample.atMs) / 1000.0, sample.rates[l]));
            highest = std::max(highest, sample.rates[l]);
        }
        m_plot->graph(int(l))->data()->set(points, true);
    }
    const double newest = double(history.newestMs()) / 1000.0;
    m_plot->xAxis->setRange(newest - double(history.windowMs()) / 1000.0, newest);
    m_plot->yAxis->setRange(0, highest * 1.1);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int RateChart::plottedPoints(Layer layer) const
{
    return m_plot->graph(int(layer))->dataCount();
}

double RateChart::plottedSum(Layer layer) const
{
    double sum = 0;
    const auto points = m_plot->graph(int(layer))->data();
    for (auto it = points->constBegin(); it != points->constEnd(); ++it)
        sum += it->value;
    return sum;
}

bool RateChart::savePng(const QString &fileName)
{
    return m_plot->savePng(fileName);
}

} // namespace payonce::console
