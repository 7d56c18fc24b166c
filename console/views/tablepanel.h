#pragma once

#include <QWidget>

class QAbstractItemModel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace payonce::console {

/// A table as every view of the console shows one: sortable by any column, filtered by a
/// text typed above it (any column matching), and exported to CSV as shown.
class TablePanel : public QWidget {
    Q_OBJECT
public:
    /// `name` prefixes the object names of the parts ("<name>Table", "<name>Filter",
    /// "<name>Export") so tests and shortcuts can find them.
    TablePanel(const QString &name, QAbstractItemModel *model, QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QLineEdit *filter() const { return m_filter; }
    /// The source row of the current selection, -1 when none.
    int currentSourceRow() const;
    /// Makes a source row the current, selected one (false when filtered out or absent).
    bool selectSourceRow(int sourceRow);
    /// Writes the shown rows as CSV; false with *error set when the file cannot be written.
    bool exportCsv(const QString &fileName, QString *error) const;

public Q_SLOTS:
    /// Asks for a file name and exports.
    void exportWithDialog();
    /// Column widths to the contents (bounded); done on every fresh list.
    void fitColumns();

private:
    QTableView *m_table;
    QSortFilterProxyModel *m_proxy;
    QLineEdit *m_filter;
};

} // namespace payonce::console
