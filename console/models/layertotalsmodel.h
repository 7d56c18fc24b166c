#pragma once

#include "shared/streammessage.h"

#include <QAbstractTableModel>

namespace payonce::console {

/// One row per layer (in the order of the defence): its colour, the requests and
/// callbacks it decided since the agent started, and its rate in the latest metrics.
class LayerTotalsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        LayerColumn,
        TotalColumn,
        RateColumn,
        ColumnCount
    };

    explicit LayerTotalsModel(QObject *parent = nullptr);

    void setMetrics(const StreamMetrics &metrics);
    qint64 total(Layer layer) const { return m_metrics.duplicates.value(layer); }
    /// Every layer but "none": what the defence caught.
    qint64 caughtTotal() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    StreamMetrics m_metrics;
};

} // namespace payonce::console
