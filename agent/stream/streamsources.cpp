#include "streamsources.h"

#include "core/gateways/breakerregistry.h"
#include "core/metrics/metricsregistry.h"

namespace payonce::stream {

StreamMetrics readStreamMetrics(const core::MetricsRegistry &registry, core::BreakerRegistry *breakers)
{
    StreamMetrics m;
    for (Layer layer : allLayers)
        m.duplicates.insert(layer, 0);
    const QList<core::MetricSample> duplicates = registry.samples(QStringLiteral("payonce_duplicates_total"));
    for (const core::MetricSample &sample : duplicates) {
        for (const auto &[name, value] : sample.labels) {
            if (name != u"layer")
                continue;
            if (const auto layer = layerFromName(value))
                m.duplicates.insert(*layer, qint64(sample.value));
        }
    }
    double requests = 0;
    const QList<core::MetricSample> answered = registry.samples(QStringLiteral("payonce_requests_total"));
    for (const core::MetricSample &sample : answered)
        requests += sample.value;
    m.requests = qint64(requests);
    if (const auto latency = registry.histogramSnapshot(QStringLiteral("payonce_request_duration_seconds"))) {
        m.latencyP50Ms = core::LatencyHistogram::quantile(*latency, 0.5) * 1000.0;
        m.latencyP99Ms = core::LatencyHistogram::quantile(*latency, 0.99) * 1000.0;
    }
    const QList<core::MetricSample> degraded = registry.samples(QStringLiteral("payonce_redis_degraded"));
    m.redisDegraded = !degraded.isEmpty() && degraded.first().value != 0;
    if (breakers) {
        for (const core::BreakerSnapshot &b : breakers->snapshots())
            m.breakerStates.insert(b.name, core::breakerStateName(b.effectiveState()));
    }
    return m;
}

QList<StreamBreaker> streamBreakers(core::BreakerRegistry &breakers, qint64 nowMs)
{
    QList<StreamBreaker> out;
    for (const core::BreakerSnapshot &b : breakers.snapshots()) {
        const bool forced = b.mode.effectiveAt(nowMs) != core::BreakerMode::Auto;
        out.append({b.name, core::breakerStateName(b.effectiveState()), core::breakerModeName(b.effectiveMode),
                    forced ? b.mode.actor : QString(), forced ? b.mode.reason : QString()});
    }
    return out;
}

} // namespace payonce::stream
