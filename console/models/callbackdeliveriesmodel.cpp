#include "callbackdeliveriesmodel.h"

#include "layercolors.h"

namespace payonce::console {

CallbackDeliveriesModel::CallbackDeliveriesModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("received_at"), tr("Received")},
                      {QStringLiteral("channel"), tr("Channel")},
                      {QStringLiteral("pay_no"), tr("pay_no")},
                      {QStringLiteral("order_no"), tr("order_no")},
                      {QStringLiteral("verified"), tr("Verified")},
                      {QStringLiteral("layer"), tr("Deciding layer")},
                      {QStringLiteral("http_status"), tr("HTTP")},
                      {QStringLiteral("outcome"), tr("Outcome")},
                      {QStringLiteral("agent_id"), tr("Agent")}},
                     parent)
{
}

QVariant CallbackDeliveriesModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    if (key == u"layer" && role == Qt::DecorationRole) {
        if (const auto layer = layerFromName(row.value(key).toString()))
            return layerColor(*layer);
    }
    return {};
}

} // namespace payonce::console
