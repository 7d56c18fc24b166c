#pragma once

#include "shared/layer.h"

#include <QWidget>

class QCustomPlot;

namespace payonce::console {

class RateHistory;

/// The dashboard's chart: one line per layer (in the layer's colour) of interceptions per
/// second over the history's window, the newest at the right edge. It plots exactly what
/// the history holds, so its points are bounded by the history's capacity.
class RateChart : public QWidget {
    Q_OBJECT
public:
    explicit RateChart(QWidget *parent = nullptr);

    /// Replaces every line with the history's samples and replots (queued).
    void showHistory(const RateHistory &history);
    /// The points of one layer's line.
    int plottedPoints(Layer layer) const;
    /// The sum of one layer's plotted rates (tests: "did it move?").
    double plottedSum(Layer layer) const;
    bool savePng(const QString &fileName);
    QCustomPlot *plot() const { return m_plot; }

private:
    QCustomPlot *m_plot;
};

} // namespace payonce::console
