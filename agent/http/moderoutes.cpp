#include "moderoutes.h"

#include "errormapping.h"
#include "jsonbody.h"
#include "routesupport.h"

#include "core/ports/auditwriter.h"
#include "core/ports/callbackmodestore.h"
#include "core/ports/clock.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::http {

namespace {

core::Result<QJsonObject> modeJson(core::CallbackModeStore &modes)
{
    auto setting = modes.mode();
    if (!setting)
        return setting.error();
    auto waiting = modes.acceptedWaiting();
    if (!waiting)
        return waiting.error();
    const core::CallbackModeSetting &s = setting.value();
    return QJsonObject{
        {QStringLiteral("callbacks"), core::callbackModeName(s.mode)},
        {QStringLiteral("accepted_waiting"), waiting.value()},
        {QStringLiteral("changed_by"), s.actor},
        {QStringLiteral("reason"), s.reason},
        {QStringLiteral("changed_at"), isoTime(s.changedAtMs)},
    };
}

} // namespace

void registerModeRoutes(HttpServer &server, core::CallbackModeStore &modes, core::AuditWriter &audit,
                        const core::Clock &clock, EventPublisher publish,
                        std::function<void(core::CallbackMode)> applied)
{
    server.route(Method::Get, QStringLiteral("/api/v1/mode"), Role::Viewer, [&](const HttpRequest &) {
        auto json = modeJson(modes);
        return json ? HttpReply::ok(json.value()) : errorReply(json.error());
    });

    server.route(Method::Put, QStringLiteral("/api/v1/mode"), Role::Operator,
                 [&, publish, applied](const HttpRequest &request) {
                     auto body = parseJsonObject(request.body, {QStringLiteral("callbacks"), QStringLiteral("reason")});
                     if (!body)
                         return errorReply(QStringLiteral("invalid_request"), body.error().publicMessage);
                     const auto mode = core::callbackModeFromName(body->value(QStringLiteral("callbacks")).toString());
                     if (!mode)
                         return errorReply(QStringLiteral("invalid_request"),
                                           QStringLiteral("callbacks must be \"normal\" or \"accept_only\""));
                     const QString reason = body->value(QStringLiteral("reason")).toString().trimmed();
                     if (reason.isEmpty())
                         return errorReply(QStringLiteral("invalid_request"),
                                           QStringLiteral("reason must be a non-empty string"));
                     const QString actor = request.principal ? request.principal->name : QStringLiteral("unknown");
                     auto before = modeJson(modes);
                     // The audit row is written inside the mode's own transaction: both or neither.
                     QJsonObject afterJson;
                     auto set = modes.setMode(*mode, actor, reason, clock.nowMs(), [&]() -> core::Result<void> {
                         auto after = modeJson(modes);
                         if (!after)
                             return after.error();
                         afterJson = after.value();
                         auto audited = audit.append(
                             {actor, QStringLiteral("mode.set"), QStringLiteral("mode:callbacks"),
                              before ? QString::fromUtf8(QJsonDocument(before.value()).toJson(QJsonDocument::Compact))
                                     : QString(),
                              QString::fromUtf8(QJsonDocument(afterJson).toJson(QJsonDocument::Compact)), reason,
                              request.traceId});
                         if (!audited)
                             return audited.error();
                         return {};
                     });
                     if (!set)
                         return errorReply(set.error());
                     if (applied)
                         applied(*mode);
                     if (publish)
                         publish({streamevent::CallbackMode, QStringLiteral("callbacks"), core::callbackModeName(*mode),
                                  actor, reason});
                     return HttpReply::ok(afterJson);
                 });
}

} // namespace payonce::http
