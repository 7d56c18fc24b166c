#pragma once

#include "shared/streammessage.h"

namespace payonce::core {
class BreakerRegistry;
class MetricsRegistry;
} // namespace payonce::core

namespace payonce::stream {

/// The numbers of a metrics message, read from what the agent already counts — never
/// counted a second time: payonce_duplicates_total{layer} (app/agentmetrics.h),
/// payonce_requests_total summed and payonce_request_duration_seconds merged for p50/p99
/// (the HTTP server's), payonce_redis_degraded; breaker states (effective: a forced mode
/// shows as it acts) from the breakers. Rates are left to the hub. Cheap: no database.
/// Thread-safe.
StreamMetrics readStreamMetrics(const core::MetricsRegistry &registry, core::BreakerRegistry *breakers);

/// The breakers as a snapshot lists them (who forced one, and why, while it is forced).
QList<StreamBreaker> streamBreakers(core::BreakerRegistry &breakers, qint64 nowMs);

} // namespace payonce::stream
