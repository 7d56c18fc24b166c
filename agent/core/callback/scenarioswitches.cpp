#include "core/callback/scenarioswitches.h"

#include "core/ports/clock.h"
#include "core/ports/qarunstore.h"
#include "core/qa/scenariorunner.h"

#include "logging/categories.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::core {

namespace {
// A miss for an order that looks like a scenario's re-reads, but not more often than this.
constexpr qint64 kMissRefreshMs = 100;
} // namespace

ScenarioSwitches::ScenarioSwitches(QaRunStore &store, const Clock &clock, qint64 refreshMs)
    : m_store(store), m_clock(clock), m_refreshMs(refreshMs)
{
}

std::optional<CallbackLayerSwitches> ScenarioSwitches::lookup(const QString &orderNo) const
{
    for (const Entry &entry : m_entries) {
        if (orderNo.startsWith(entry.orderPrefix))
            return entry.switches;
    }
    return std::nullopt;
}

void ScenarioSwitches::refresh(qint64 now)
{
    m_readAtMs = now;
    auto running = m_store.running();
    if (!running) {
        qCWarning(lcCore) << "qa: running scenarios not read:" << running.error().internalMessage;
        return;
    }
    m_entries.clear();
    for (const QaRun &run : running.value()) {
        QStringList names;
        const QJsonArray layers =
            QJsonDocument::fromJson(run.params.toUtf8()).object().value(QStringLiteral("disable_layers")).toArray();
        for (const QJsonValue &layer : layers)
            names.append(layer.toString());
        auto switches = CallbackLayerSwitches::fromNames(names);
        if (switches && !names.isEmpty())
            m_entries.append({ScenarioRunner::orderPrefix(run.scenarioId), switches.value()});
    }
}

std::optional<CallbackLayerSwitches> ScenarioSwitches::forOrder(const QString &orderNo)
{
    const qint64 now = m_clock.nowMs();
    std::lock_guard guard(m_mutex);
    if (m_readAtMs < 0 || now - m_readAtMs >= m_refreshMs)
        refresh(now);
    auto found = lookup(orderNo);
    if (!found && orderNo.startsWith(u"qa-") && now - m_readAtMs >= kMissRefreshMs) {
        refresh(now);
        found = lookup(orderNo);
    }
    return found;
}

} // namespace payonce::core
