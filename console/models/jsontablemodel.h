#pragma once

#include <QAbstractTableModel>
#include <QJsonObject>
#include <QList>

namespace payonce::console {

/// A table of the JSON objects an operations endpoint lists, one row per object and one
/// column per field. Subclasses choose the columns and may colour cells; the agent's
/// JSON stays the single source, so a field added to the contract is one column more.
/// Qt::DisplayRole is text; SortRole is the raw value (numbers sort as numbers).
class JsonTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int SortRole = Qt::UserRole + 1;

    struct Column {
        QString key;    ///< the JSON field
        QString header; ///< what the operator reads
    };

    /// Replaces every row (a fresh answer of the endpoint).
    void setRows(const QList<QJsonObject> &rows);
    /// The rows of a JSON array (non-objects skipped).
    void setRows(const QJsonArray &rows);
    QJsonObject rowObject(int row) const;
    /// The column of a JSON field, -1 when not shown.
    int columnOf(const QString &key) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// The text of one JSON value as a cell shows it.
    static QString displayText(const QJsonValue &value);

protected:
    JsonTableModel(QList<Column> columns, QObject *parent);
    /// Colours and other roles for one cell; the default has none.
    virtual QVariant cellRole(const QJsonObject &row, const QString &key, int role) const;
    void replaceRow(int row, const QJsonObject &object);
    /// Adds one row at the top (newest first) and drops the oldest beyond `maxRows`.
    void prependRow(const QJsonObject &object, int maxRows);

private:
    QList<Column> m_columns;
    QList<QJsonObject> m_rows;
};

} // namespace payonce::console
