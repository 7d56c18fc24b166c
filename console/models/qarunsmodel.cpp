#include "qarunsmodel.h"

#include "scenariotext.h"

#include <QColor>

namespace payonce::console {

QaRunsModel::QaRunsModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("scenario_id"), tr("Scenario")},
                      {QStringLiteral("kind"), tr("Kind")},
                      {QStringLiteral("status"), tr("Status")},
                      {QStringLiteral("phase"), tr("Phase")},
                      {QStringLiteral("orders"), tr("Orders")},
                      {QStringLiteral("duplicates"), tr("Duplicates")},
                      {QStringLiteral("concurrency"), tr("Concurrency")},
                      {QStringLiteral("disable_layers"), tr("Layers off")},
                      {QStringLiteral("started_by"), tr("Started by")},
                      {QStringLiteral("agent_id"), tr("Agent")},
                      {QStringLiteral("started_at"), tr("Started")},
                      {QStringLiteral("finished_at"), tr("Finished")}},
                     parent)
{
}

QJsonObject QaRunsModel::flattened(const QJsonObject &run)
{
    QJsonObject row = run;
    const QJsonObject params = run.value(QStringLiteral("params")).toObject();
    for (const char *key : {"orders", "duplicates", "concurrency", "time_scale"})
        row.insert(QLatin1String(key), params.value(QLatin1String(key)));
    const QStringList layers = params.value(QStringLiteral("disable_layers")).toVariant().toStringList();
    row.insert(QStringLiteral("disable_layers"), layers.isEmpty() ? QStringLiteral("none") : layers.join(u", "));
    row.insert(QStringLiteral("phase"),
               run.value(QStringLiteral("progress")).toObject().value(QStringLiteral("phase")));
    return row;
}

void QaRunsModel::setRuns(const QJsonArray &runs)
{
    QList<QJsonObject> rows;
    rows.reserve(runs.size());
    for (const QJsonValue &run : runs) {
        if (run.isObject())
            rows.append(flattened(run.toObject()));
    }
    setRows(rows);
}

int QaRunsModel::rowOf(const QString &scenarioId) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (rowObject(row).value(QStringLiteral("scenario_id")).toString() == scenarioId)
            return row;
    }
    return -1;
}

bool QaRunsModel::applyProgress(const QString &scenarioId, const QJsonObject &progress)
{
    const int row = rowOf(scenarioId);
    if (row < 0)
        return false;
    QJsonObject object = rowObject(row);
    const QString phase = progress.value(QStringLiteral("phase")).toString();
    object.insert(QStringLiteral("phase"), phase);
    object.insert(QStringLiteral("progress"), progress);
    // A final phase is the run's status too (an abandoned run's event names its agent).
    if (isFinalScenarioPhase(phase)) {
        object.insert(QStringLiteral("status"), phase);
        if (progress.contains(QStringLiteral("agent_id")))
            object.insert(QStringLiteral("agent_id"), progress.value(QStringLiteral("agent_id")));
    }
    replaceRow(row, object);
    return true;
}

QVariant QaRunsModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    if (key == u"status" && role == Qt::DecorationRole)
        return scenarioStatusColor(row.value(key).toString());
    return {};
}

QColor scenarioStatusColor(const QString &status)
{
    if (status == u"passed")
        return QColor(0x2c, 0xa0, 0x2c);
    if (status == u"failed" || status == u"error")
        return QColor(0xd6, 0x27, 0x28);
    if (status == u"running")
        return QColor(0xff, 0xa5, 0x00);
    if (status == u"abandoned") // its agent died: no verdict, neither green nor orange
        return QColor(0x8c, 0x56, 0x4b);
    return QColor(Qt::gray);
}

} // namespace payonce::console
