#include "breakersmodel.h"

#include "layercolors.h"

namespace payonce::console {

BreakersModel::BreakersModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("name"), tr("Breaker")},
                      {QStringLiteral("state"), tr("State")},
                      {QStringLiteral("mode"), tr("Mode")},
                      {QStringLiteral("failure_rate"), tr("Failure rate")},
                      {QStringLiteral("calls"), tr("Calls")},
                      {QStringLiteral("changed_by"), tr("Set by")},
                      {QStringLiteral("reason"), tr("Reason")},
                      {QStringLiteral("expires_at"), tr("Expires")},
                      {QStringLiteral("changed_at"), tr("Changed")}},
                     parent)
{
}

int BreakersModel::rowOf(const QString &name) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (rowObject(row).value(QStringLiteral("name")).toString() == name)
            return row;
    }
    return -1;
}

void BreakersModel::applyStates(const QMap<QString, QString> &states)
{
    for (auto it = states.cbegin(); it != states.cend(); ++it) {
        const int row = rowOf(it.key());
        if (row < 0)
            continue;
        QJsonObject object = rowObject(row);
        object.insert(QStringLiteral("state"), it.value());
        replaceRow(row, object);
    }
}

QVariant BreakersModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    if (key == u"state" && role == Qt::DecorationRole)
        return breakerStateColor(row.value(key).toString());
    return {};
}

} // namespace payonce::console
