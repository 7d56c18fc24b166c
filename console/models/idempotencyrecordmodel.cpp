#include "idempotencyrecordmodel.h"

#include <QColor>

namespace payonce::console {

IdempotencyRecordModel::IdempotencyRecordModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("user_id"), tr("User")},
                      {QStringLiteral("key"), tr("Key")},
                      {QStringLiteral("status"), tr("Status")},
                      {QStringLiteral("locked_at"), tr("Locked at")},
                      {QStringLiteral("created_at"), tr("Created")},
                      {QStringLiteral("completed_at"), tr("Completed")},
                      {QStringLiteral("fingerprint"), tr("Fingerprint")},
                      {QStringLiteral("response"), tr("Stored response")}},
                     parent)
{
}

QString IdempotencyRecordModel::unlockBlocker(const QJsonObject &record)
{
    if (record.isEmpty())
        return tr("Look a key up first.");
    const QString status = record.value(QStringLiteral("status")).toString();
    if (status == u"completed")
        return tr("The record is completed: its stored response answers every retry, nothing to unlock.");
    if (status != u"in_flight")
        return tr("The agent reported the status \"%1\": only an in_flight record can be unlocked.").arg(status);
    return {};
}

QVariant IdempotencyRecordModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    if (key == u"status" && role == Qt::ForegroundRole && row.value(key).toString() == u"in_flight")
        return QColor(0xd6, 0x27, 0x28);
    return {};
}

} // namespace payonce::console
