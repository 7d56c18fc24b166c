#include "endpointmetrics_p.h"

#include <algorithm>

namespace payonce::http {

EndpointMetrics::EndpointMetrics(core::MetricsRegistry &registry, const QString &endpoint)
{
    for (std::size_t i = 0; i < outcomes.size(); ++i)
        byOutcome[i] = &registry.counter(
            QStringLiteral("payonce_requests_total"),
            QStringLiteral("HTTP requests answered, by route pattern and status class"),
            {{QStringLiteral("endpoint"), endpoint}, {QStringLiteral("outcome"), QString::fromLatin1(outcomes[i])}});
    duration = &registry.histogram(QStringLiteral("payonce_request_duration_seconds"),
                                   QStringLiteral("Time from dispatch to the reply written, by route pattern"),
                                   {{QStringLiteral("endpoint"), endpoint}});
}

void EndpointMetrics::record(int status, std::chrono::steady_clock::time_point started) const
{
    const std::size_t index = std::size_t(std::clamp(status / 100 - 2, 0, int(outcomes.size()) - 1));
    byOutcome[index]->add();
    duration->observe(std::chrono::steady_clock::now() - started);
}

AuthMetrics::AuthMetrics(core::MetricsRegistry &registry)
{
    const QString failures = QStringLiteral("payonce_auth_failures_total");
    const QString failuresHelp = QStringLiteral(
        "Requests that needed a token and came without one (missing_token) or with one that "
        "names no configured token (unknown_token)");
    missingToken = &registry.counter(failures, failuresHelp,
                                     {{QStringLiteral("reason"), QStringLiteral("missing_token")}});
    unknownToken = &registry.counter(failures, failuresHelp,
                                     {{QStringLiteral("reason"), QStringLiteral("unknown_token")}});
    refused = &registry.counter(QStringLiteral("payonce_auth_refused_total"),
                                QStringLiteral("Requests with a wrong token refused with 429 because their client "
                                               "address failed authentication too often within the window"));
}

void addConnectionReaders(core::MetricsRegistry &registry, std::function<ConnectionGuard::Stats()> stats)
{
    registry.addReader(
        QStringLiteral("payonce_http_connections_closed_total"),
        QStringLiteral("Connections the agent closed, by reason (idle keep-alive, a head not complete in time)"),
        core::MetricType::Counter, [stats] {
            const ConnectionGuard::Stats s = stats();
            return QList<core::MetricSample>{
                {{{QStringLiteral("reason"), QStringLiteral("idle")}}, double(s.idleCloses)},
                {{{QStringLiteral("reason"), QStringLiteral("header_timeout")}}, double(s.headerTimeouts)}};
        });
    registry.addReader(
        QStringLiteral("payonce_http_connections_refused_total"),
        QStringLiteral("Connections the guard answered with an error and closed, by reason"), core::MetricType::Counter,
        [stats] {
            const ConnectionGuard::Stats s = stats();
            auto sample = [](const char *reason, quint64 value) {
                return core::MetricSample{{{QStringLiteral("reason"), QLatin1String(reason)}}, double(value)};
            };
            return QList<core::MetricSample>{
                sample("payload_too_large", s.payloadTooLarge),      sample("length_required", s.lengthRequired),
                sample("header_too_large", s.headerTooLarge),        sample("malformed", s.malformed),
                sample("too_many_per_address", s.perAddressRefused), sample("too_many_in_total", s.totalRefused)};
        });
}

} // namespace payonce::http
