#pragma once

#include "shared/layer.h"

#include <QString>

namespace payonce::console {

/// What an operator reads for a code of the agent (a defence layer, a scenario kind, a
/// compensation status, the callback mode, a breaker state) where the console names it in
/// words: a legend, a check box, a choice, a figure. In English that is the code itself,
/// as the API, the metrics and the logs spell it; other languages translate it (each kind
/// of code is its own translation context, so "lock" the layer and "open" the breaker
/// state never share a translation). A code the console does not know stays as it is.
/// Table cells keep the agent's codes: they are data, sorted, filtered and exported.
QString layerLabel(Layer layer);
QString layerLabel(const QString &layerName);
QString scenarioKindLabel(const QString &kind);
/// A QA run's phase: setup, the kind of the part running, settling, or how it ended.
QString scenarioPhaseLabel(const QString &phase);
QString compensationStatusLabel(const QString &status);
QString callbackModeLabel(const QString &mode);
QString breakerStateLabel(const QString &state);
QString findingKindLabel(const QString &kind);
/// Whether a finding of this kind is about money (paid twice, a wrong amount, a refund
/// that failed or went wrong) rather than stock, points, coupons or a stuck order.
bool isMoneyFinding(const QString &kind);

} // namespace payonce::console
