#pragma once

#include <QString>

#include <array>
#include <optional>

namespace payonce {

/// The layer that decided a request, as named in X-Payonce-Layer and in the metrics.
/// Order is the order of the defence: cheap and fast first, durable last.
enum class Layer {
    None,           ///< processed for the first time
    IdempotencyKey, ///< L1
    Token,          ///< L2
    Lock,           ///< L3
    UniqueIndex,    ///< L4 (and the seen-processed fast path of callbacks)
    StateMachine,   ///< L5
    SideEffect,     ///< a side effect's own key
    Rejected,       ///< bad input or bad signature
};

inline constexpr std::array allLayers{Layer::None,        Layer::IdempotencyKey, Layer::Token,      Layer::Lock,
                                      Layer::UniqueIndex, Layer::StateMachine,   Layer::SideEffect, Layer::Rejected};

/// The wire name: "none", "idempotency_key", "token", "lock", "unique_index",
/// "state_machine", "side_effect", "rejected".
QString layerName(Layer layer);
std::optional<Layer> layerFromName(QStringView name);

} // namespace payonce
