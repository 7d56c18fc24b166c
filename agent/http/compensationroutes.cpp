#include "compensationroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/orders/setupservice.h"
#include "core/ports/clock.h"
#include "core/ports/orderrepository.h"
#include "core/settlement/compensationservice.h"
#include "core/settlement/refundservice.h"
#include "shared/money.h"

#include <QJsonArray>

namespace payonce::http {

namespace {

/// A refund's "items": [{"sku_id": "SKU-1", "qty": 2}, …] (sku order); none: [].
core::Result<core::RefundItems> parseRefundItems(const QJsonValue &value)
{
    auto bad = [](const QString &why) { return core::Error::make(core::ErrorCode::InvalidInput, why, why); };
    if (!value.isArray())
        return bad(QStringLiteral("items must be an array of {\"sku_id\", \"qty\"}"));
    core::RefundItems items;
    for (const QJsonValue &entry : value.toArray()) {
        const QJsonObject item = entry.toObject();
        const QString sku = item.value(QStringLiteral("sku_id")).toString();
        const QJsonValue qty = item.value(QStringLiteral("qty"));
        if (!entry.isObject() || !core::isValidBusinessId(sku))
            return bad(QStringLiteral("every item needs a sku_id of 1-64 of [A-Za-z0-9_-]"));
        // A whole number of units: a JSON number that is an integer, at least 1.
        if (!qty.isDouble() || qty.toDouble() != double(qty.toInteger()) || qty.toInteger() < 1
            || qty.toInteger() > 1000000)
            return bad(QStringLiteral("the qty of %1 must be a whole number from 1 to 1000000").arg(sku));
        if (items.contains(sku))
            return bad(QStringLiteral("SKU %1 is named twice").arg(sku));
        items.insert(sku, qty.toInteger());
    }
    if (items.isEmpty())
        return bad(QStringLiteral("items, when given, names at least one SKU"));
    return items;
}

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
        {QStringLiteral("amount"),
         c.amountFen ? QJsonValue(formatAmountFen(*c.amountFen)) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("items"), refundItemsJson(c.refundItems)},
    };
}

QJsonObject refundJson(const core::RefundRecord &r)
{
    return QJsonObject{
        {QStringLiteral("refund_no"), r.refundNo},
        {QStringLiteral("status"), core::refundStatusName(r.status)},
        {QStringLiteral("order_no"), r.orderNo},
        {QStringLiteral("channel"), core::channelName(r.channel)},
        {QStringLiteral("pay_no"), r.payNo},
        {QStringLiteral("amount"), formatAmountFen(r.amountFen)},
        {QStringLiteral("own_payment"), r.ownPayment},
        {QStringLiteral("partial"), r.partial},
        {QStringLiteral("items"), refundItemsJson(r.items)},
        {QStringLiteral("attempts"), r.attempts},
        {QStringLiteral("last_error"), r.lastError.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(r.lastError)}};
}

HttpReply decide(const HttpRequest &request, core::CompensationService &compensations, core::RefundService *refunds,
                 const core::Clock &clock, bool approve)
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
    QJsonObject body = toJson(decided->compensation);
    // An approved refund goes to its platform now, after COMMIT. Approving again sends
    // nothing new: the refund number is the compensation's, and a refund already with the
    // platform (or settled) is only reported. An unknown outcome stays `requested` for the
    // follow-up; the approval itself stands either way.
    const QString refundNo = decided->compensation.result.value(QStringLiteral("refund_no")).toString();
    if (approve && refunds && !refundNo.isEmpty()) {
        auto submitted = refunds->submit(refundNo);
        if (submitted)
            body.insert(QStringLiteral("refund"), refundJson(submitted.value()));
        else
            body.insert(QStringLiteral("refund"),
                        QJsonObject{{QStringLiteral("refund_no"), refundNo},
                                    {QStringLiteral("status"), QStringLiteral("requested")},
                                    {QStringLiteral("last_error"), submitted.error().publicMessage}});
    }
    return HttpReply::ok(body);
}

/// POST /api/v1/compensations: a proposal checked (kind, order, a refund's payment, amount and
/// items) and recorded, waiting for another person's approval.
HttpReply propose(const HttpRequest &request, core::CompensationService &compensations, core::OrderRepository &orders,
                  const core::Clock &clock)
{
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
        return errorReply(QStringLiteral("invalid_request"), QStringLiteral("order_no must be 1-64 of [A-Za-z0-9_-]"));
    auto order = orders.orderDetail(orderNo);
    if (!order)
        return errorReply(order.error());
    if (!order.value())
        return errorReply(QStringLiteral("order_not_found"), QStringLiteral("no order %1").arg(orderNo));
    // A refund may name the payment and the amount to give back (a double payment's
    // extra pay_no, a partial refund); every other kind takes neither.
    core::CompensationProposal proposal{*kind, orderNo, std::nullopt, {}, actorOf(request), body->reason, {}, {}, {}};
    const QJsonValue payNo = body->object.value(QStringLiteral("pay_no"));
    const QJsonValue amount = body->object.value(QStringLiteral("amount"));
    const QJsonValue items = body->object.value(QStringLiteral("items"));
    if (*kind != core::CompensationKind::Refund
        && (!payNo.isUndefined() || !amount.isUndefined() || !items.isUndefined()))
        return errorReply(QStringLiteral("invalid_request"),
                          QStringLiteral("pay_no, amount and items are for refunds only"));
    if (!payNo.isUndefined()) {
        if (!core::isValidBusinessId(payNo.toString()))
            return errorReply(QStringLiteral("invalid_request"),
                              QStringLiteral("pay_no must be 1-64 of [A-Za-z0-9_-]"));
        proposal.payNo = payNo.toString();
    }
    if (!amount.isUndefined()) {
        const auto fen = amount.isString() ? parseAmountFen(amount.toString()) : std::nullopt;
        if (!fen || *fen <= 0)
            return errorReply(QStringLiteral("invalid_amount"),
                              QStringLiteral("amount must be a positive decimal string such as \"12.50\""));
        proposal.amountFen = *fen;
    }
    if (!items.isUndefined()) {
        auto parsed = parseRefundItems(items);
        if (!parsed)
            return errorReply(parsed.error());
        proposal.refundItems = parsed.value();
    }
    auto proposed = compensations.propose(proposal, clock.nowMs());
    if (!proposed)
        return errorReply(proposed.error());
    return HttpReply::created(toJson(proposed->compensation));
}

} // namespace

void registerCompensationRoutes(HttpServer &server, core::CompensationService &compensations,
                                core::OrderRepository &orders, const core::Clock &clock, core::RefundService *refunds)
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

    server.route(Method::Post, QStringLiteral("/api/v1/compensations"), Role::Operator,
                 [&](const HttpRequest &request) { return propose(request, compensations, orders, clock); });

    // An approved refund compensation is submitted to the platform at once: the gateway lane.
    server.route(
        Method::Post, QStringLiteral("/api/v1/compensations/<id>/approve"), gatewayRoute(Role::Approver),
        [&, refunds](const HttpRequest &request) { return decide(request, compensations, refunds, clock, true); });
    server.route(
        Method::Post, QStringLiteral("/api/v1/compensations/<id>/reject"), Role::Approver,
        [&, refunds](const HttpRequest &request) { return decide(request, compensations, refunds, clock, false); });
}

} // namespace payonce::http
