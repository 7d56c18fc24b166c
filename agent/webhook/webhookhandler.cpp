#include "webhookhandler.h"

#include "core/gateways/circuitbreaker.h"
#include "gateway/blockinghttp.h"
#include "logging/categories.h"
#include "shared/tracecontext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::webhook {

using core::Error;
using core::ErrorCode;

WebhookHandler::WebhookHandler(WebhookOptions options, core::CircuitBreaker *breaker)
    : m_options(std::move(options)), m_breaker(breaker)
{
}

QByteArray WebhookHandler::bodyFor(const core::OutboxEvent &event)
{
    QJsonObject body{{QStringLiteral("event_id"), event.eventId},
                     {QStringLiteral("event_type"), event.eventType},
                     {QStringLiteral("aggregate_id"), event.aggregateId},
                     {QStringLiteral("trace_id"), event.traceId}};
    QJsonParseError parseError;
    const QJsonDocument payload = QJsonDocument::fromJson(event.payload.toUtf8(), &parseError);
    if (parseError.error == QJsonParseError::NoError && payload.isObject())
        body.insert(QStringLiteral("payload"), payload.object());
    else if (parseError.error == QJsonParseError::NoError && payload.isArray())
        body.insert(QStringLiteral("payload"), payload.array());
    else
        body.insert(QStringLiteral("payload"), event.payload);
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

core::Result<void> WebhookHandler::deliver(const core::OutboxEvent &event)
{
    if (m_options.urls.isEmpty())
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("webhook handler has no URLs"));
    const QByteArray body = bodyFor(event);
    for (const QUrl &url : m_options.urls) {
        const core::Result<void> sent = post(url, event, body);
        if (!sent.ok())
            return sent;
    }
    return {};
}

core::Result<void> WebhookHandler::post(const QUrl &url, const core::OutboxEvent &event, const QByteArray &body)
{
    std::optional<core::BreakerPermit> permit;
    if (m_breaker) {
        permit = m_breaker->tryAcquire();
        if (!permit)
            return Error::make(ErrorCode::Unavailable, QStringLiteral("webhook breaker %1 is open; %2 not called")
                                                           .arg(m_breaker->name(), url.toDisplayString()));
    }
    gateway::HttpRequest request;
    request.method = "POST";
    request.url = url;
    request.body = body;
    request.timeoutMs = m_options.timeoutMs;
    request.headers = {{"Content-Type", "application/json"},
                       {"Idempotency-Key", event.eventId.toUtf8()},
                       {"X-Payonce-Event-Type", event.eventType.toUtf8()}};
    // The receiver joins the trace of the request that made the event (W3C Trace Context).
    if (const QByteArray traceParent = traceParentFor(event.traceId); !traceParent.isEmpty())
        request.headers.append({"traceparent", traceParent});
    const gateway::HttpResponse response = gateway::sendBlocking(request);

    const bool completed = response.outcome == gateway::HttpResponse::Outcome::Completed;
    const bool receiverSick = !completed || response.status >= 500 || response.status == 429;
    if (m_breaker)
        m_breaker->onResult(*permit, !receiverSick);

    if (!completed)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("webhook %1: %2").arg(url.toDisplayString(), response.errorText));
    if (response.status < 200 || response.status > 299)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("webhook %1: HTTP %2").arg(url.toDisplayString()).arg(response.status));
    // The event's own line (the dispatcher adds its trace id to it).
    qCInfo(lcOutbox).noquote() << "webhook: event" << event.eventId << "delivered to" << url.toDisplayString() << "HTTP"
                               << response.status;
    return {};
}

} // namespace payonce::webhook
