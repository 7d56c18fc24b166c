#pragma once

#include "core/outbox/outboxhandler.h"

#include <QList>
#include <QUrl>

namespace payonce::core {
class CircuitBreaker;
}

namespace payonce::webhook {

struct WebhookOptions {
    /// Every event is POSTed to each of these; it is done when all answered 2xx.
    QList<QUrl> urls;
    /// One POST, connect to last byte. Keep it below the dispatcher's lease margin.
    int timeoutMs = 5000;
};

/// An outbox handler that POSTs the event as JSON to the configured URLs with header
/// `Idempotency-Key: <event_id>` (receivers deduplicate on it: delivery is at-least-once,
/// and after a partial failure every URL gets the event again). A 2xx from every URL is
/// done; anything else (other status, timeout, transport error) is a failure the
/// dispatcher retries with backoff.
///
/// Body: {"event_id","event_type","aggregate_id","trace_id","payload"} with the payload
/// embedded as JSON (as a string if it is not valid JSON). An event with a trace id is
/// sent with `traceparent: 00-<trace id>-<fresh span id>-01`, so the receiver joins the
/// trace of the request that made the event.
///
/// The breaker, if given, guards the receivers: while it is open no POST is made and the
/// delivery fails at once (Unavailable). Timeouts, transport errors and 5xx/429 count as
/// breaker failures; other answers, 4xx included, prove the receiver alive.
///
/// Blocking: a QNetworkAccessManager and an event loop live on the calling thread for one
/// POST (gateway's sendBlocking), so any number of dispatcher threads may share one handler.
class WebhookHandler final : public core::OutboxHandler {
public:
    explicit WebhookHandler(WebhookOptions options, core::CircuitBreaker *breaker = nullptr);

    core::Result<void> deliver(const core::OutboxEvent &event) override;

    /// The request body for an event (exposed for tests and the operator's view).
    static QByteArray bodyFor(const core::OutboxEvent &event);

private:
    core::Result<void> post(const QUrl &url, const core::OutboxEvent &event, const QByteArray &body);

    WebhookOptions m_options;
    core::CircuitBreaker *m_breaker;
};

} // namespace payonce::webhook
