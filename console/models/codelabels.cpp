#include "codelabels.h"

#include <QCoreApplication>

#include <algorithm>
#include <iterator>

namespace payonce::console {

namespace {

// The codes lupdate offers for translation, per context; the English text is the code.
const char *const kLayers[] = {
    QT_TRANSLATE_NOOP("Layer", "none"),         QT_TRANSLATE_NOOP("Layer", "idempotency_key"),
    QT_TRANSLATE_NOOP("Layer", "token"),        QT_TRANSLATE_NOOP("Layer", "lock"),
    QT_TRANSLATE_NOOP("Layer", "unique_index"), QT_TRANSLATE_NOOP("Layer", "state_machine"),
    QT_TRANSLATE_NOOP("Layer", "side_effect"),  QT_TRANSLATE_NOOP("Layer", "rejected"),
};
const char *const kScenarioKinds[] = {
    QT_TRANSLATE_NOOP("ScenarioKind", "mixed"),
    QT_TRANSLATE_NOOP("ScenarioKind", "retry_storm"),
    QT_TRANSLATE_NOOP("ScenarioKind", "concurrent_burst"),
    QT_TRANSLATE_NOOP("ScenarioKind", "gateway_replay"),
    QT_TRANSLATE_NOOP("ScenarioKind", "mq_redelivery"),
};
const char *const kScenarioPhases[] = {
    QT_TRANSLATE_NOOP("ScenarioPhase", "setup"),  QT_TRANSLATE_NOOP("ScenarioPhase", "settling"),
    QT_TRANSLATE_NOOP("ScenarioPhase", "passed"), QT_TRANSLATE_NOOP("ScenarioPhase", "failed"),
    QT_TRANSLATE_NOOP("ScenarioPhase", "error"),  QT_TRANSLATE_NOOP("ScenarioPhase", "abandoned"),
};
const char *const kCompensationStatuses[] = {
    QT_TRANSLATE_NOOP("CompensationStatus", "proposed"), QT_TRANSLATE_NOOP("CompensationStatus", "approved"),
    QT_TRANSLATE_NOOP("CompensationStatus", "rejected"), QT_TRANSLATE_NOOP("CompensationStatus", "executed"),
    QT_TRANSLATE_NOOP("CompensationStatus", "failed"),
};
const char *const kCallbackModes[] = {
    QT_TRANSLATE_NOOP("CallbackMode", "normal"),
    QT_TRANSLATE_NOOP("CallbackMode", "accept_only"),
};
const char *const kBreakerStates[] = {
    QT_TRANSLATE_NOOP("BreakerState", "closed"),
    QT_TRANSLATE_NOOP("BreakerState", "open"),
    QT_TRANSLATE_NOOP("BreakerState", "half_open"),
};

const char *const kFindingKinds[] = {
    QT_TRANSLATE_NOOP("FindingKind", "effect_mismatch"), QT_TRANSLATE_NOOP("FindingKind", "missing_outbox"),
    QT_TRANSLATE_NOOP("FindingKind", "stuck_paying"),    QT_TRANSLATE_NOOP("FindingKind", "stuck_accepted"),
    QT_TRANSLATE_NOOP("FindingKind", "amount_mismatch"), QT_TRANSLATE_NOOP("FindingKind", "double_payment"),
    QT_TRANSLATE_NOOP("FindingKind", "oversold"),        QT_TRANSLATE_NOOP("FindingKind", "refund_failed"),
    QT_TRANSLATE_NOOP("FindingKind", "refund_abnormal"),
};

template <std::size_t N>
QString label(const char *context, const char *const (&codes)[N], const QString &code)
{
    const QByteArray utf8 = code.toUtf8();
    const auto known = std::find_if(std::begin(codes), std::end(codes), [&](const char *c) { return utf8 == c; });
    return known == std::end(codes) ? code : QCoreApplication::translate(context, *known);
}

} // namespace

QString layerLabel(Layer layer)
{
    return layerLabel(layerName(layer));
}

QString layerLabel(const QString &layerName)
{
    return label("Layer", kLayers, layerName);
}

QString scenarioKindLabel(const QString &kind)
{
    return label("ScenarioKind", kScenarioKinds, kind);
}

QString scenarioPhaseLabel(const QString &phase)
{
    // While a part runs, the phase is that part's kind.
    const QString asPhase = label("ScenarioPhase", kScenarioPhases, phase);
    return asPhase != phase ? asPhase : scenarioKindLabel(phase);
}

QString compensationStatusLabel(const QString &status)
{
    return label("CompensationStatus", kCompensationStatuses, status);
}

QString callbackModeLabel(const QString &mode)
{
    return label("CallbackMode", kCallbackModes, mode);
}

QString breakerStateLabel(const QString &state)
{
    return label("BreakerState", kBreakerStates, state);
}

QString findingKindLabel(const QString &kind)
{
    return label("FindingKind", kFindingKinds, kind);
}

bool isMoneyFinding(const QString &kind)
{
    return kind == u"double_payment" || kind == u"amount_mismatch" || kind == u"refund_failed"
           || kind == u"refund_abnormal";
}

} // namespace payonce::console
