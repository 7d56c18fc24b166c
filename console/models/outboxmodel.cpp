#include "outboxmodel.h"

#include <QColor>

namespace payonce::console {

OutboxModel::OutboxModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("id"), tr("Id")},
                      {QStringLiteral("status"), tr("Status")},
                      {QStringLiteral("redriven"), tr("Re-driven")},
                      {QStringLiteral("event_type"), tr("Event")},
                      {QStringLiteral("aggregate_id"), tr("Order")},
                      {QStringLiteral("attempts"), tr("Attempts")},
                      {QStringLiteral("last_error"), tr("Last error")},
                      {QStringLiteral("next_attempt_at"), tr("Next attempt")},
                      {QStringLiteral("created_at"), tr("Created")},
                      {QStringLiteral("delivered_at"), tr("Delivered")},
                      {QStringLiteral("event_id"), tr("Event id")}},
                     parent)
{
}

int OutboxModel::rowOfId(qint64 id) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (rowObject(row).value(QStringLiteral("id")).toInteger() == id)
            return row;
    }
    return -1;
}

QVariant OutboxModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    if (role == Qt::BackgroundRole && row.value(QStringLiteral("redriven")).toBool())
        return QColor(0xdd, 0xee, 0xff);
    if (key == u"status" && role == Qt::ForegroundRole && row.value(key).toString() == u"dead")
        return QColor(0xd6, 0x27, 0x28);
    return {};
}

} // namespace payonce::console
