#include "outboxroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/ports/auditwriter.h"
#include "core/ports/clock.h"
#include "core/ports/outboxstore.h"

#include <QJsonArray>

namespace payonce::http {

namespace {

/// What an audit line keeps of an event: the fields a redrive changes.
QJsonObject stateOf(const core::OutboxEvent &event)
{
    return QJsonObject{{QStringLiteral("status"), core::outboxStatusName(event.status)},
                       {QStringLiteral("attempts"), event.attempts},
                       {QStringLiteral("last_error"), event.lastError},
                       {QStringLiteral("redriven"), event.redriven}};
}

QJsonObject toJson(const core::OutboxEvent &event)
{
    QJsonObject json = stateOf(event);
    json.insert(QStringLiteral("id"), event.id);
    json.insert(QStringLiteral("event_id"), event.eventId);
    json.insert(QStringLiteral("event_type"), event.eventType);
    json.insert(QStringLiteral("aggregate_id"), event.aggregateId);
    json.insert(QStringLiteral("next_attempt_at"), isoTime(event.nextAttemptAtMs));
    json.insert(QStringLiteral("trace_id"), event.traceId);
    json.insert(QStringLiteral("created_at"), isoTime(event.createdAtMs));
    json.insert(QStringLiteral("delivered_at"), isoTime(event.deliveredAtMs.value_or(0)));
    json.insert(QStringLiteral("payload"), storedJson(event.payload));
    return json;
}

} // namespace

void registerOutboxRoutes(HttpServer &server, core::OutboxStore &outbox, core::AuditWriter &audit,
                          const core::Clock &clock)
{
    server.route(Method::Get, QStringLiteral("/api/v1/outbox"), Role::Viewer, [&](const HttpRequest &request) {
        const auto status = choiceParameter(
            request, QStringLiteral("status"),
            {QStringLiteral("pending"), QStringLiteral("dead"), QStringLiteral("delivered")});
        if (!status)
            return errorReply(status.error());
        const auto limit = limitParameter(request);
        if (!limit)
            return errorReply(limit.error());
        auto events = outbox.list(status->isEmpty() ? std::nullopt : core::outboxStatusFromName(status.value()),
                                  limit.value());
        if (!events)
            return errorReply(events.error());
        QJsonArray list;
        for (const core::OutboxEvent &event : events.value())
            list.append(toJson(event));
        return HttpReply::json(list);
    });

    server.route(
        Method::Post, QStringLiteral("/api/v1/outbox/<id>/redrive"), Role::Operator, [&](const HttpRequest &request) {
            const auto action = parseIdAction(request);
            if (!action)
                return errorReply(action.error());
            const qint64 id = action->id;
            const QString actor = actorOf(request);
            auto redriven = outbox.redrive(
                id, clock.nowMs(),
                [&](const core::OutboxEvent &before, const core::OutboxEvent &after) -> core::Result<void> {
                    auto audited = audit.append({actor, QStringLiteral("outbox.redrive"),
                                                 QStringLiteral("outbox:%1").arg(id), compactJson(stateOf(before)),
                                                 compactJson(stateOf(after)), action->body.reason, request.traceId});
                    if (!audited)
                        return audited.error();
                    return {};
                });
            if (!redriven)
                return errorReply(redriven.error());
            return HttpReply::ok(toJson(redriven.value()));
        });
}

} // namespace payonce::http
