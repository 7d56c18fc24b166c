#pragma once

#include <QAbstractTableModel>
#include <QJsonObject>
#include <QMap>
#include <QStringList>

namespace payonce::console {

/// The hits by layer of one QA scenario's invariant report (docs/openapi.yaml, "QA scenarios"): one
/// row per layer in the order of the defence (in the layer's colour), then any other name
/// the report carries ("idempotency_key/503", "no_answer"), with the callback deliveries
/// it decided (by_layer) and the confirms it answered (confirm_layers). Empty until a
/// report is set; a report with missing or mistyped fields shows zeros, never fails.
class ScenarioReportModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        LayerColumn,
        DeliveriesColumn,
        ConfirmsColumn,
        ColumnCount
    };

    explicit ScenarioReportModel(QObject *parent = nullptr);

    /// The "report" object of GET /api/v1/qa/scenarios/{id}; {} clears.
    void setReport(const QJsonObject &report);
    QJsonObject report() const { return m_report; }
    /// Deliveries the layer decided (by_layer), 0 when absent.
    qint64 deliveries(const QString &layer) const { return m_byLayer.value(layer); }
    /// The row of a layer or other name, -1 when not shown.
    int rowOf(const QString &name) const { return int(m_names.indexOf(name)); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QJsonObject m_report;
    QStringList m_names;
    QMap<QString, qint64> m_byLayer;
    QMap<QString, qint64> m_confirms;
};

} // namespace payonce::console
