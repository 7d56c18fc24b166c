#include "findingsmodel.h"

namespace payonce::console {

FindingsModel::FindingsModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("id"), tr("Id")},
                      {QStringLiteral("kind"), tr("Kind")},
                      {QStringLiteral("order_no"), tr("order_no")},
                      {QStringLiteral("pay_no"), tr("pay_no")},
                      {QStringLiteral("evidence"), tr("Evidence")},
                      {QStringLiteral("seen_count"), tr("Seen")},
                      {QStringLiteral("first_seen"), tr("First seen")},
                      {QStringLiteral("last_seen"), tr("Last seen")},
                      {QStringLiteral("status"), tr("Status")}},
                     parent)
{
}

} // namespace payonce::console
