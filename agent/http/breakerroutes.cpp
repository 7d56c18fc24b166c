#include "breakerroutes.h"

#include "errormapping.h"
#include "jsonbody.h"
#include "routesupport.h"

#include "core/gateways/breakerregistry.h"
#include "core/ports/clock.h"

#include <QJsonArray>
#include <QJsonObject>

namespace payonce::http {

namespace {

/// The contract's shape (docs/openapi.yaml): {"name","state","mode","failure_rate","calls","changed_at","changed_by","reason","expires_at"}.
QJsonObject toJson(const core::BreakerSnapshot &snapshot, qint64 nowMs)
{
    const core::BreakerModeSetting &mode = snapshot.mode;
    const bool inForce = mode.effectiveAt(nowMs) != core::BreakerMode::Auto;
    return QJsonObject{
        {QStringLiteral("name"), snapshot.name},
        {QStringLiteral("state"), core::breakerStateName(snapshot.effectiveState())},
        {QStringLiteral("mode"), core::breakerModeName(snapshot.effectiveMode)},
        {QStringLiteral("failure_rate"), snapshot.failureRate},
        {QStringLiteral("calls"), snapshot.calls},
        {QStringLiteral("changed_at"), isoTime(std::max(snapshot.stateChangedAtMs, mode.changedAtMs))},
        {QStringLiteral("changed_by"), inForce ? mode.actor : QString()},
        {QStringLiteral("reason"), inForce ? mode.reason : QString()},
        {QStringLiteral("expires_at"), inForce && mode.expiresAtMs ? isoTime(*mode.expiresAtMs) : QString()},
    };
}

} // namespace

void registerBreakerRoutes(HttpServer &server, core::BreakerRegistry &breakers, const core::Clock &clock,
                           EventPublisher publish)
{
    server.route(Method::Get, QStringLiteral("/api/v1/breakers"), Role::Viewer, [&](const HttpRequest &) {
        QJsonArray list;
        const qint64 now = clock.nowMs();
        for (const core::BreakerSnapshot &snapshot : breakers.snapshots())
            list.append(toJson(snapshot, now));
        return HttpReply::json(list);
    });

    server.route(
        Method::Post, QStringLiteral("/api/v1/breakers/<name>"), Role::Operator,
        [&, publish](const HttpRequest &request) {
            const QString name = request.pathArgument(QStringLiteral("name"));
            if (!breakers.find(name))
                return errorReply(QStringLiteral("breaker_not_found"), QStringLiteral("no breaker named %1").arg(name));
            auto body = parseJsonObject(request.body, {QStringLiteral("mode"), QStringLiteral("reason")});
            if (!body)
                return errorReply(QStringLiteral("invalid_request"), body.error().publicMessage);
            const auto mode = core::breakerModeFromName(body->value(QStringLiteral("mode")).toString());
            if (!mode)
                return errorReply(QStringLiteral("invalid_request"),
                                  QStringLiteral("mode must be \"auto\", \"forced_open\" or \"forced_closed\""));
            const QString reason = body->value(QStringLiteral("reason")).toString().trimmed();
            if (reason.isEmpty())
                return errorReply(QStringLiteral("invalid_request"),
                                  QStringLiteral("reason must be a non-empty string"));
            const QJsonValue expiresIn = body->value(QStringLiteral("expires_in"));
            qint64 seconds = 0;
            if (!expiresIn.isUndefined() && !expiresIn.isNull()) {
                // A whole number of seconds; a JSON number that is not integral is refused.
                const double raw = expiresIn.toDouble(-1);
                seconds = expiresIn.toInteger(-1);
                if (!expiresIn.isDouble() || seconds < 0 || double(seconds) != raw || seconds > 7 * 24 * 3600)
                    return errorReply(QStringLiteral("invalid_request"),
                                      QStringLiteral("expires_in must be whole seconds between 0 and 604800"));
            }
            const QString actor = request.principal ? request.principal->name : QStringLiteral("unknown");
            auto set = breakers.setMode(name, *mode, actor, reason, std::chrono::seconds(seconds));
            if (!set)
                return errorReply(set.error());
            if (publish)
                publish({streamevent::BreakerMode, name, core::breakerModeName(*mode), actor, reason});
            return HttpReply::ok(toJson(breakers.find(name)->snapshot(), clock.nowMs()));
        });
}

} // namespace payonce::http
