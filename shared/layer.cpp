#include "layer.h"

namespace payonce {

QString layerName(Layer layer)
{
    switch (layer) {
    case Layer::None: return QStringLiteral("none");
    case Layer::IdempotencyKey: return QStringLiteral("idempotency_key");
    case Layer::Token: return QStringLiteral("token");
    case Layer::Lock: return QStringLiteral("lock");
    case Layer::UniqueIndex: return QStringLiteral("unique_index");
    case Layer::StateMachine: return QStringLiteral("state_machine");
    case Layer::SideEffect: return QStringLiteral("side_effect");
    case Layer::Rejected: return QStringLiteral("rejected");
    }
    Q_UNREACHABLE();
}

std::optional<Layer> layerFromName(QStringView name)
{
    for (Layer layer : allLayers) {
        if (layerName(layer) == name)
            return layer;
    }
    return std::nullopt;
}

} // namespace payonce
