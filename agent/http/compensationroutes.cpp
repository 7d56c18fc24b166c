#include "compensationroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/compensationservice.h"
#include "core/ports/clock.h"
#include "core/ports/orderrepository.h"
#include "core/setupservice.h"
#include "shared/money.h"

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
        {QStringLiteral("pay_no"), c.payNo.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(c.payNo)},
        {QStringLiteral("amount"), c.amountFen ? QJsonValue(formatAmountFen(*c.amountFen)) : QJsonValue(QJsonValue::Null)},
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
        // A refund may name the payment and the amount to give back (a double payment's
        // extra pay_no, a partial refund); every other kind takes neither.
        core::CompensationProposal proposal{*kind, orderNo, std::nullopt, {}, actorOf(request), body->reason, {}, {}};
        const QJsonValue payNo = body->object.value(QStringLiteral("pay_no"));
        const QJsonValue amount = body->object.value(QStringLiteral("amount"));
        if (*kind != core::CompensationKind::Refund && (!payNo.isUndefined() || !amount.isUndefined()))
            return errorReply(QStringLiteral("invalid_request"), QStringLiteral("pay_no and amount are for refunds only"));
        if (!payNo.isUndefined()) {
            if (!core::isValidBusinessId(payNo.toString()))
                return errorReply(QStringLiteral("invalid_request"),
                                  QStringLiteral("pay_no must be 1-64 of [A-Za-z0-9_-]"));
            proposal.payNo = payNo.toString();
        }
        if (!amount.isUndefined()) {
            const auto fen = amount.isString() ? parseAmountFen(amount.toString()) : std::nullopt;
            if (!fen || *fen <= 0)
                return errorReply(QStringLiteral("invalid_request"),
                                  QStringLiteral("amount must be a positive decimal string such as \"12.50\""));
            proposal.amountFen = *fen;
        }
        auto proposed = compensations.propose(proposal, clock.nowMs());
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
