#include "compensationroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/compensationservice.h"
#include "core/ports/clock.h"
#include "core/ports/orderrepository.h"
#include "core/setupservice.h"

#include <QJsonArray>

namespace payonce::http {

namespace {

QJsonObject toJson(const core::Compensation &c)
{
    return QJsonObject{
        {QStringLiteral("id"), c.id},
        {QStringLiteral("kind"), core::compensationKindName(c.kind)},
        {QStringLiteral("order_no"), c.orderNo},
        {QStringLiteral("finding_id"), c.findingId ? QJsonValue(*c.findingId) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("status"), c.status},
        {QStringLiteral("proposed_by"), c.proposedBy},
        {QStringLiteral("proposal_reason"), c.proposalReason},
        {QStringLiteral("decided_by"), c.decidedBy},
        {QStringLiteral("decision_reason"), c.decisionReason},
        {QStringLiteral("result"), c.result},
        {QStringLiteral("created_at"), isoTime(c.createdAtMs)},
    };
}

HttpReply decide(const HttpRequest &request, core::CompensationService &compensations, const core::Clock &clock,
                 bool approve)
{
    const auto action = parseIdAction(request);
    if (!action)
        return errorReply(action.error());
    const qint64 id = action->id;
    const QString &reason = action->body.reason;
    auto decided = approve ? compensations.approve(id, actorOf(request), reason, clock.nowMs())
                           : compensations.reject(id, actorOf(request), reason, clock.nowMs());
    if (!decided)
        return errorReply(decided.error());
    return HttpReply::ok(toJson(decided->compensation));
}

} // namespace

void registerCompensationRoutes(HttpServer &server, core::CompensationService &compensations,
                                core::OrderRepository &orders, const core::Clock &clock)
{
    server.route(Method::Get, QStringLiteral("/api/v1/compensations"), Role::Viewer, [&](const HttpRequest &request) {
        const auto status = choiceParameter(request, QStringLiteral("status"),
                                            {QStringLiteral("proposed"), QStringLiteral("approved"),
                                             QStringLiteral("rejected"), QStringLiteral("executed"),
                                             QStringLiteral("failed")});
        if (!status)
            return errorReply(status.error());
        const auto limit = limitParameter(request);
        if (!limit)
            return errorReply(limit.error());
        auto rows = compensations.list(status.value(), limit.value());
        if (!rows)
            return errorReply(rows.error());
        QJsonArray list;
        for (const core::Compensation &c : rows.value())
            list.append(toJson(c));
        return HttpReply::json(list);
    });

    server.route(Method::Post, QStringLiteral("/api/v1/compensations"), Role::Operator, [&](const HttpRequest &request) {
        const auto body = parseActionBody(request.body, {QStringLiteral("kind"), QStringLiteral("order_no")});
        if (!body)
            return errorReply(body.error());
        const auto kind = core::compensationKindFromName(body->object.value(QStringLiteral("kind")).toString());
        if (!kind)
            return errorReply(QStringLiteral("invalid_request"),
                              QStringLiteral("kind must be \"freeze_coupon\", \"reverse_points\", \"restore_stock\" "
                                             "or \"refund\""));
        const QString orderNo = body->object.value(QStringLiteral("order_no")).toString();
        if (!core::isValidBusinessId(orderNo))
            return errorReply(QStringLiteral("invalid_request"),
                              QStringLiteral("order_no must be 1-64 of [A-Za-z0-9_-]"));
        auto order = orders.orderDetail(orderNo);
        if (!order)
            return errorReply(order.error());
        if (!order.value())
            return errorReply(QStringLiteral("order_not_found"), QStringLiteral("no order %1").arg(orderNo));
        auto proposed = compensations.propose({*kind, orderNo, std::nullopt, {}, actorOf(request), body->reason},
                                              clock.nowMs());
        if (!proposed)
            return errorReply(proposed.error());
        return HttpReply::created(toJson(proposed->compensation));
    });

    server.route(Method::Post, QStringLiteral("/api/v1/compensations/<id>/approve"), Role::Approver,
                 [&](const HttpRequest &request) { return decide(request, compensations, clock, true); });
    server.route(Method::Post, QStringLiteral("/api/v1/compensations/<id>/reject"), Role::Approver,
                 [&](const HttpRequest &request) { return decide(request, compensations, clock, false); });
}

} // namespace payonce::http
