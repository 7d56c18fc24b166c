#pragma once

#include "shared/layer.h"

#include <QColor>

namespace payonce::console {

/// The one colour of each layer, used by every chart, table and legend of the console, so
/// "unique_index is orange" holds wherever an operator looks.
QColor layerColor(Layer layer);

/// The colour of a breaker state ("closed", "half_open", "open"); grey when unknown.
QColor breakerStateColor(const QString &state);

} // namespace payonce::console
