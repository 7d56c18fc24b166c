#include "core/ports/scenarioreport.h"

namespace payonce::core {

QJsonObject ScenarioReport::toJson() const
{
    QJsonObject layers;
    for (auto it = byLayer.cbegin(); it != byLayer.cend(); ++it)
        layers.insert(it.key(), it.value());
    QJsonObject confirms;
    for (auto it = confirmLayers.cbegin(); it != confirmLayers.cend(); ++it)
        confirms.insert(it.key(), it.value());
    return {{QStringLiteral("orders"), orders},
            {QStringLiteral("deliveries"), deliveries},
            {QStringLiteral("paid_once"), paidOnce},
            {QStringLiteral("double_effects"), doubleEffects},
            {QStringLiteral("missing_effects"), missingEffects},
            {QStringLiteral("lost"), lost},
            {QStringLiteral("outbox_pending"), outboxPending},
            {QStringLiteral("by_layer"), layers},
            {QStringLiteral("confirm_layers"), confirms},
            {QStringLiteral("passed"), passed()}};
}

} // namespace payonce::core
