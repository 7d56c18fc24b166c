#include "layertotalsmodel.h"

#include "jsontablemodel.h"
#include "layercolors.h"

namespace payonce::console {

LayerTotalsModel::LayerTotalsModel(QObject *parent) : QAbstractTableModel(parent)
{
}

void LayerTotalsModel::setMetrics(const StreamMetrics &metrics)
{
    if (metrics.duplicates == m_metrics.duplicates && metrics.rates == m_metrics.rates)
        return;
    m_metrics = metrics;
    Q_EMIT dataChanged(index(0, TotalColumn), index(rowCount() - 1, RateColumn));
}

qint64 LayerTotalsModel::caughtTotal() const
{
    qint64 sum = 0;
    for (Layer layer : allLayers) {
        if (layer != Layer::None)
            sum += m_metrics.duplicates.value(layer);
    }
    return sum;
}

int LayerTotalsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(allLayers.size());
}

int LayerTotalsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LayerTotalsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Layer layer = allLayers.at(std::size_t(index.row()));
    switch (index.column()) {
    case LayerColumn:
        if (role == Qt::DisplayRole || role == JsonTableModel::SortRole)
            return layerName(layer);
        if (role == Qt::DecorationRole)
            return layerColor(layer);
        break;
    case TotalColumn:
        if (role == Qt::DisplayRole)
            return QString::number(m_metrics.duplicates.value(layer));
        if (role == JsonTableModel::SortRole)
            return m_metrics.duplicates.value(layer);
        break;
    case RateColumn:
        if (role == Qt::DisplayRole)
            return QString::number(m_metrics.rates.value(layer), 'f', 1);
        if (role == JsonTableModel::SortRole)
            return m_metrics.rates.value(layer);
        break;
    default: break;
    }
    if (role == Qt::TextAlignmentRole && index.column() != LayerColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant LayerTotalsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case LayerColumn: return tr("Layer");
    case TotalColumn: return tr("Total");
    case RateColumn: return tr("Per second");
    default: return {};
    }
}

} // namespace payonce::console
