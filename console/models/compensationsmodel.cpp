#include "compensationsmodel.h"

#include <QColor>

namespace payonce::console {

CompensationsModel::CompensationsModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("id"), tr("Id")},
                      {QStringLiteral("kind"), tr("Kind")},
                      {QStringLiteral("order_no"), tr("order_no")},
                      {QStringLiteral("status"), tr("Status")},
                      {QStringLiteral("amount"), tr("Amount")},
                      {QStringLiteral("proposed_by"), tr("Proposed by")},
                      {QStringLiteral("proposal_reason"), tr("Why proposed")},
                      {QStringLiteral("decided_by"), tr("Decided by")},
                      {QStringLiteral("decision_reason"), tr("Why decided")},
                      {QStringLiteral("result"), tr("Effect")},
                      {QStringLiteral("created_at"), tr("Proposed at")}},
                     parent)
{
}

QVariant CompensationsModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    // The queue stands out: a proposal waits for a second person.
    if (key == u"status" && role == Qt::DecorationRole && row.value(key).toString() == u"proposed")
        return QColor(0xff, 0xa5, 0x00);
    return {};
}

} // namespace payonce::console
