#pragma once

#include "core/common/result.h"
#include "core/ports/scenarioreport.h"

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace payonce::core {

/// What a QA scenario does to the payments it makes (docs/openapi.yaml, "QA scenarios", docs/design.md
/// "The simulated platform"): retry_storm (the platform's re-delivery schedule, scaled),
/// concurrent_burst (every notification several times at one instant, across the
/// targets), gateway_replay (a confirm replayed after a gateway timeout), mq_redelivery
/// (an outbox event delivered twice), mixed (the orders split among the four).
enum class ScenarioKind {
    RetryStorm,
    ConcurrentBurst,
    GatewayReplay,
    MqRedelivery,
    Mixed
};

QString scenarioKindName(ScenarioKind kind);

/// A scenario's parameters as POSTed, validated. Limits keep one run bounded on a
/// developer machine: orders 1..10000, duplicates 1..100, concurrency 1..64,
/// time_scale in (0, 10], 1..16 http:// targets (agent base URLs), disable_layers from
/// "lock", "unique_index", "state_machine", "side_effect".
struct ScenarioParams {
    static constexpr int kMaxOrders = 10000;
    static constexpr int kMaxDuplicates = 100;
    static constexpr int kMaxConcurrency = 64;
    static constexpr int kMaxTargets = 16;

    ScenarioKind kind = ScenarioKind::Mixed;
    int orders = 100;
    int duplicates = 5;
    int concurrency = 16;
    double timeScale = 0.001; ///< a ratio of durations, not money
    QStringList targets;      ///< base URLs without a trailing slash
    QStringList disableLayers;

    /// The body of POST /api/v1/qa/scenarios. Absent fields take the defaults above;
    /// absent or empty targets become {defaultTarget}. A bad field is InvalidInput whose
    /// public message names it ("orders must be a whole number in 1..10000").
    static Result<ScenarioParams> fromJson(const QJsonObject &body, const QString &defaultTarget);
    QJsonObject toJson() const;
    /// The targets that are none of `allowed` (base URLs), in order: compared by scheme,
    /// host (case-folded) and port, so "http://LOCALHOST:80" is "http://localhost".
    QStringList targetsOutside(const QStringList &allowed) const;
};

} // namespace payonce::core
