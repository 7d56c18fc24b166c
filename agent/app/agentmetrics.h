#pragma once

namespace payonce::core {
class BreakerRegistry;
class CallbackPipeline;
class ConfirmPipeline;
class KeyStore;
class MetricsRegistry;
class NotificationVerifier;
class RetentionPruner;
} // namespace payonce::core

namespace payonce::app {

class OperationalCountsCache;

/// What the agent's scrape-time metrics read. All must outlive the registry's scrapes.
struct MetricsSources {
    core::ConfirmPipeline *confirm = nullptr;
    core::CallbackPipeline *callbacks = nullptr;
    core::BreakerRegistry *breakers = nullptr;
    core::KeyStore *keyStore = nullptr;
    OperationalCountsCache *counts = nullptr;
    core::RetentionPruner *retention = nullptr;
    const core::NotificationVerifier *verifier = nullptr;
};

/// Registers the families that GET /metrics shows beside the HTTP server's own request
/// counters (docs/openapi.yaml, "Streams and health"): what the pipelines already count is read from
/// them, never counted twice —
///   payonce_duplicates_total{layer}      confirms + callbacks decided by each layer
///   payonce_stale_fence_refused_total    stale fencing-token writes refused
///   payonce_callback_unfenced_settlements_total  orders paid with Redis unreachable
///   payonce_callback_grouped_delivery_rows_total / _commits_total  decided delivery rows
///                                        and the group commits that wrote them
///   payonce_callback_grouped_delivery_refused_total  FAIL at once: the group commit's queue was full
///   payonce_retention_pruned_total{table} rows retention deleted
///   payonce_callback_verified_copies_reused_total  byte-identical copies not verified again
///   payonce_breaker_state{name}          0 closed, 1 half-open, 2 open
///   payonce_breaker_forced{name,mode}    1 while an operator forces a breaker
///   payonce_redis_degraded               1 while the key store is unreachable
///   payonce_outbox_pending, payonce_outbox_dead_total, payonce_compensations{status},
///   payonce_findings_open{kind}          COUNT(*)s read from the database per scrape
void registerAgentMetrics(core::MetricsRegistry &registry, const MetricsSources &sources);

} // namespace payonce::app
