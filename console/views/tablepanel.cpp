#include "tablepanel.h"

#include "console/models/csvexport.h"
#include "console/models/jsontablemodel.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace payonce::console {

TablePanel::TablePanel(const QString &name, QAbstractItemModel *model, QWidget *parent)
    : QWidget(parent), m_table(new QTableView(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_filter(new QLineEdit(this))
{
    setObjectName(name + QStringLiteral("Panel"));
    m_proxy->setSourceModel(model);
    m_proxy->setSortRole(JsonTableModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setObjectName(name + QStringLiteral("Proxy"));
    m_table->setObjectName(name + QStringLiteral("Table"));
    m_table->setModel(m_proxy);
    // The agent's own order (newest first, or the layers' order of defence) until the
    // operator clicks a header.
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->setSortingEnabled(true);
    m_table->setWordWrap(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setVisible(false);
    m_filter->setObjectName(name + QStringLiteral("Filter"));
    m_filter->setPlaceholderText(tr("Filter…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &TablePanel::fitColumns);
    fitColumns();
    auto *exportButton = new QPushButton(tr("Export CSV…"), this);
    exportButton->setObjectName(name + QStringLiteral("Export"));
    connect(exportButton, &QPushButton::clicked, this, &TablePanel::exportWithDialog);

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_filter, 1);
    bar->addWidget(exportButton);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_table, 1);
}

void TablePanel::fitColumns()
{
    // Wide enough for what is shown, never so wide that one JSON cell hides the others.
    constexpr int kWidestColumn = 320;
    m_table->resizeColumnsToContents();
    for (int column = 0; column < m_proxy->columnCount(); ++column)
        m_table->setColumnWidth(column, std::min(m_table->columnWidth(column), kWidestColumn));
}

int TablePanel::currentSourceRow() const
{
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    if (!current.isValid())
        return -1;
    return m_proxy->mapToSource(current).row();
}

bool TablePanel::selectSourceRow(int sourceRow)
{
    const QModelIndex shown = m_proxy->mapFromSource(m_proxy->sourceModel()->index(sourceRow, 0));
    if (!shown.isValid())
        return false;
    m_table->setCurrentIndex(shown);
    m_table->selectRow(shown.row());
    return true;
}

bool TablePanel::exportCsv(const QString &fileName, QString *error) const
{
    QSaveFile file(fileName);
    if (!file.open(QIODevice::WriteOnly) || !writeCsv(*m_proxy, file) || !file.commit()) {
        *error = file.errorString();
        return false;
    }
    return true;
}

void TablePanel::exportWithDialog()
{
    const QString fileName = QFileDialog::getSaveFileName(
        this, tr("Export table as CSV"), objectName() + QStringLiteral(".csv"), tr("CSV files (*.csv)"));
    if (fileName.isEmpty())
        return;
    QString error;
    if (!exportCsv(fileName, &error))
        QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1: %2").arg(fileName, error));
}

} // namespace payonce::console
