#include "scenarioreportmodel.h"

#include "jsontablemodel.h"
#include "layercolors.h"

#include "shared/layer.h"

namespace payonce::console {

namespace {

/// Counts of a JSON object; a value that is not a non-negative number counts 0.
QMap<QString, qint64> countsOf(const QJsonValue &value)
{
    QMap<QString, qint64> counts;
    const QJsonObject object = value.toObject();
    for (auto it = object.begin(); it != object.end(); ++it)
        counts.insert(it.key(), std::max<qint64>(0, it.value().toInteger()));
    return counts;
}

} // namespace

ScenarioReportModel::ScenarioReportModel(QObject *parent) : QAbstractTableModel(parent)
{
}

void ScenarioReportModel::setReport(const QJsonObject &report)
{
    beginResetModel();
    m_report = report;
    m_byLayer = countsOf(report.value(QStringLiteral("by_layer")));
    m_confirms = countsOf(report.value(QStringLiteral("confirm_layers")));
    m_names.clear();
    if (!report.isEmpty()) {
        for (Layer layer : allLayers)
            m_names.append(layerName(layer));
        QStringList others;
        for (const QString &name : m_byLayer.keys() + m_confirms.keys()) {
            if (!m_names.contains(name) && !others.contains(name))
                others.append(name);
        }
        others.sort();
        m_names += others;
    }
    endResetModel();
}

int ScenarioReportModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_names.size());
}

int ScenarioReportModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ScenarioReportModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QString &name = m_names.at(index.row());
    switch (index.column()) {
    case LayerColumn:
        if (role == Qt::DisplayRole || role == JsonTableModel::SortRole)
            return name;
        if (role == Qt::DecorationRole) {
            // "idempotency_key/503" is the idempotency key's answer: its colour too.
            const auto layer = layerFromName(QStringView(name).left(name.indexOf(u'/')));
            return layer ? layerColor(*layer) : QColor(Qt::gray);
        }
        break;
    case DeliveriesColumn:
    case ConfirmsColumn: {
        const qint64 count = (index.column() == DeliveriesColumn ? m_byLayer : m_confirms).value(name);
        if (role == Qt::DisplayRole)
            return QString::number(count);
        if (role == JsonTableModel::SortRole)
            return count;
        if (role == Qt::TextAlignmentRole)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    }
    default: break;
    }
    return {};
}

QVariant ScenarioReportModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case LayerColumn: return tr("Layer");
    case DeliveriesColumn: return tr("Callbacks caught");
    case ConfirmsColumn: return tr("Confirms answered");
    default: return {};
    }
}

} // namespace payonce::console
