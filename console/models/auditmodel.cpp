#include "auditmodel.h"

namespace payonce::console {

AuditModel::AuditModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("at"), tr("When (UTC)")},
                      {QStringLiteral("actor"), tr("Actor")},
                      {QStringLiteral("action"), tr("Action")},
                      {QStringLiteral("target"), tr("Target")},
                      {QStringLiteral("reason"), tr("Reason")},
                      {QStringLiteral("before"), tr("Before")},
                      {QStringLiteral("after"), tr("After")},
                      {QStringLiteral("trace_id"), tr("Trace")},
                      {QStringLiteral("id"), tr("Id")}},
                     parent)
{
}

QStringList AuditModel::distinctValues(const QString &key) const
{
    QStringList values;
    for (int row = 0; row < rowCount(); ++row) {
        const QString value = rowObject(row).value(key).toString();
        if (!value.isEmpty() && !values.contains(value))
            values.append(value);
    }
    values.sort();
    return values;
}

} // namespace payonce::console
