#include "reconciliationroutes.h"

#include "errormapping.h"
#include "findingroutes.h"
#include "routesupport.h"

#include "core/ports/auditwriter.h"
#include "core/ports/clock.h"
#include "core/settlement/patrolrunner.h"

#include <QJsonArray>

namespace payonce::http {

void registerReconciliationRoutes(HttpServer &server, core::PatrolRunner &patrol, core::AuditWriter &audit,
                                  const core::Clock &clock)
{
    // Asks the platforms about every order it looks at: the gateway lane.
    server.route(
        Method::Post, QStringLiteral("/api/v1/reconciliation/run"), gatewayRoute(Role::Operator),
        [&](const HttpRequest &request) {
            const auto body = parseActionBody(request.body);
            if (!body)
                return errorReply(body.error());
            const qint64 startedAt = clock.nowMs();
            auto run = patrol.tryRun(startedAt);
            if (!run)
                return errorReply(run.error());
            if (!run.value())
                return errorReply(QStringLiteral("patrol_running"),
                                  QStringLiteral("a reconciliation run is already going; ask again when it ends"));
            QJsonArray findings;
            QJsonArray ids;
            for (const core::StoredFinding &finding : *run.value()) {
                findings.append(findingJson(finding));
                ids.append(finding.id);
            }
            auto audited = audit.append(
                {actorOf(request),
                 QStringLiteral("reconciliation.run"),
                 QStringLiteral("patrol"),
                 {},
                 compactJson({{QStringLiteral("findings"), ids.size()}, {QStringLiteral("ids"), ids}}),
                 body->reason,
                 request.traceId});
            if (!audited)
                return errorReply(audited.error());
            return HttpReply::ok(
                QJsonObject{{QStringLiteral("ran_at"), isoTime(startedAt)}, {QStringLiteral("findings"), findings}});
        });
}

} // namespace payonce::http
