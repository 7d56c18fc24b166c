#pragma once

// The HTTP server's own metrics (docs/operations.md, "Metrics"): per route, failed
// authentications, and what the connection guard closed or refused.

#include "connectionguard.h"

#include "core/metrics/metricsregistry.h"

#include <array>
#include <chrono>
#include <functional>

namespace payonce::http {

// An endpoint's request counters by status class (lock-free once created) and latency.
struct EndpointMetrics {
    static constexpr std::array outcomes{"2xx", "3xx", "4xx", "5xx"};
    std::array<core::Counter *, outcomes.size()> byOutcome{};
    core::LatencyHistogram *duration = nullptr;

    EndpointMetrics(core::MetricsRegistry &registry, const QString &endpoint);
    void record(int status, std::chrono::steady_clock::time_point started) const;
};

// Failed authentications and the limiter's refusals, for /metrics (lock-free once made).
struct AuthMetrics {
    core::Counter *missingToken = nullptr;
    core::Counter *unknownToken = nullptr;
    core::Counter *refused = nullptr;

    explicit AuthMetrics(core::MetricsRegistry &registry);
};

/// payonce_http_connections_closed_total{reason} and payonce_http_connections_refused_total{reason},
/// read from stats() at each scrape (the guard may not exist yet: empty stats then).
void addConnectionReaders(core::MetricsRegistry &registry, std::function<ConnectionGuard::Stats()> stats);

} // namespace payonce::http
