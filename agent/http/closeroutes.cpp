#include "closeroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/ports/auditwriter.h"
#include "core/ports/clock.h"
#include "core/settlement/ordercloser.h"

#include <QJsonArray>

namespace payonce::http {

void registerCloseRoutes(HttpServer &server, core::OrderCloser &closer, core::AuditWriter &audit,
                         const core::Clock &clock)
{
    // Asks the platforms about every order it looks at: the gateway lane.
    server.route(Method::Post, QStringLiteral("/api/v1/orders/close-expired"), gatewayRoute(Role::Operator),
                 [&](const HttpRequest &request) {
                     const auto body = parseActionBody(request.body);
                     if (!body)
                         return errorReply(body.error());
                     const qint64 startedAt = clock.nowMs();
                     auto run = closer.tryRunOnce(startedAt);
                     if (!run)
                         return errorReply(run.error());
                     if (!run.value())
                         return errorReply(
                             QStringLiteral("close_running"),
                             QStringLiteral("the order closer is already running; ask again when it ends"));
                     const core::OrderCloser::Report &report = *run.value();
                     QJsonArray orders;
                     for (const core::OrderCloser::OrderOutcome &order : report.orders) {
                         orders.append(QJsonObject{{QStringLiteral("order_no"), order.orderNo},
                                                   {QStringLiteral("action"), order.action},
                                                   {QStringLiteral("why"), order.why}});
                     }
                     const QJsonObject counts{{QStringLiteral("closed"), report.closed},
                                              {QStringLiteral("settled"), report.settled},
                                              {QStringLiteral("left"), report.left},
                                              {QStringLiteral("moved_on"), report.movedOn},
                                              {QStringLiteral("accept_only"), report.acceptOnly}};
                     auto audited = audit.append({actorOf(request),
                                                  QStringLiteral("orders.close_expired"),
                                                  QStringLiteral("closer"),
                                                  {},
                                                  compactJson(counts),
                                                  body->reason,
                                                  request.traceId});
                     if (!audited)
                         return errorReply(audited.error());
                     QJsonObject answer = counts;
                     answer.insert(QStringLiteral("ran_at"), isoTime(startedAt));
                     answer.insert(QStringLiteral("pending_timeout_ms"), closer.options().pendingTimeoutMs);
                     answer.insert(QStringLiteral("orders"), orders);
                     return HttpReply::ok(answer);
                 });
}

} // namespace payonce::http
