#pragma once

#include "core/callback/callbackpipeline.h"

#include <QList>
#include <QString>

#include <mutex>
#include <optional>

namespace payonce::core {

class Clock;
class QaRunStore;

/// Which layers a running QA scenario disabled, for the callback path to look up by
/// order_no (docs/design.md: disable_layers applies to that scenario's orders only). Every
/// agent with qa.enabled has one, so a scenario's switches reach all its targets through
/// the shared database: the running qa_runs rows (scenario_id, params.disable_layers),
/// re-read at most every refreshMs — and at once (at most every 100 ms) when an order
/// that looks like a scenario's ("qa-…") is not among them, so the first notification of
/// a new run is not missed. An order of no running scenario gets nothing (nullopt).
/// Built only when qa.enabled; thread-safe.
class ScenarioSwitches {
public:
    ScenarioSwitches(QaRunStore &store, const Clock &clock, qint64 refreshMs = 1000);

    std::optional<CallbackLayerSwitches> forOrder(const QString &orderNo);

private:
    struct Entry {
        QString orderPrefix;
        CallbackLayerSwitches switches;
    };
    std::optional<CallbackLayerSwitches> lookup(const QString &orderNo) const;
    void refresh(qint64 now);

    QaRunStore &m_store;
    const Clock &m_clock;
    const qint64 m_refreshMs;
    std::mutex m_mutex;
    QList<Entry> m_entries;
    qint64 m_readAtMs = -1;
};

} // namespace payonce::core
