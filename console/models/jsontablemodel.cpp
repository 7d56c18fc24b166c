#include "jsontablemodel.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace payonce::console {

JsonTableModel::JsonTableModel(QList<Column> columns, QObject *parent)
    : QAbstractTableModel(parent), m_columns(std::move(columns))
{
}

void JsonTableModel::setRows(const QList<QJsonObject> &rows)
{
    beginResetModel();
    m_rows = rows;
    endResetModel();
}

void JsonTableModel::setRows(const QJsonArray &rows)
{
    QList<QJsonObject> objects;
    objects.reserve(rows.size());
    for (const QJsonValue &row : rows) {
        if (row.isObject())
            objects.append(row.toObject());
    }
    setRows(objects);
}

QJsonObject JsonTableModel::rowObject(int row) const
{
    return m_rows.value(row);
}

int JsonTableModel::columnOf(const QString &key) const
{
    for (int i = 0; i < m_columns.size(); ++i) {
        if (m_columns.at(i).key == key)
            return i;
    }
    return -1;
}

int JsonTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int JsonTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_columns.size());
}

QString JsonTableModel::displayText(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined: return {};
    case QJsonValue::Bool: return value.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
    case QJsonValue::Double: return QString::number(value.toDouble(), 'g', 12);
    case QJsonValue::String: return value.toString();
    case QJsonValue::Array: return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object: return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    }
    return {};
}

QVariant JsonTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &row = m_rows.at(index.row());
    const QString &key = m_columns.at(index.column()).key;
    const QJsonValue value = row.value(key);
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole: return displayText(value);
    case SortRole: return value.isDouble() ? QVariant(value.toDouble()) : QVariant(displayText(value));
    default: return cellRole(row, key, role);
    }
}

QVariant JsonTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= m_columns.size())
        return {};
    return m_columns.at(section).header;
}

QVariant JsonTableModel::cellRole(const QJsonObject &, const QString &, int) const
{
    return {};
}

void JsonTableModel::replaceRow(int row, const QJsonObject &object)
{
    if (row < 0 || row >= m_rows.size() || m_rows.at(row) == object)
        return;
    m_rows[row] = object;
    Q_EMIT dataChanged(index(row, 0), index(row, int(m_columns.size()) - 1));
}

void JsonTableModel::prependRow(const QJsonObject &object, int maxRows)
{
    beginInsertRows({}, 0, 0);
    m_rows.prepend(object);
    endInsertRows();
    if (maxRows > 0 && m_rows.size() > maxRows) {
        beginRemoveRows({}, maxRows, int(m_rows.size()) - 1);
        m_rows.resize(maxRows);
        endRemoveRows();
    }
}

} // namespace payonce::console
