#include "refundroutes.h"

#include "callbackdelivery.h"
#include "errormapping.h"
#include "routesupport.h"

#include "core/orders/setupservice.h"
#include "core/ports/clock.h"
#include "core/ports/refundnotificationverifier.h"
#include "core/ports/refundstore.h"
#include "core/settlement/refundservice.h"
#include "shared/layer.h"
#include "shared/money.h"

#include <QJsonArray>
#include <QJsonObject>

namespace payonce::http {

namespace {

using Code = core::CallbackOutcomeCode;

/// Like the payment callbacks, every answer names the layer that decided (docs/openapi.yaml): the
/// refund row's CAS for a copy of a settled refund, rejected for what is refused.
HttpReply platformReply(core::Channel channel, Code code, const QString &message, Layer layer)
{
    const bool ok = code == Code::Success;
    HttpReply reply =
        channel == core::Channel::Alipay
            ? HttpReply::text(ok ? QByteArrayLiteral("success") : QByteArrayLiteral("failure"), httpStatus(code))
            : HttpReply::json(
                QJsonObject{{QStringLiteral("code"), ok ? QStringLiteral("SUCCESS") : QStringLiteral("FAIL")},
                            {QStringLiteral("message"), ok ? QStringLiteral("OK") : message}},
                httpStatus(code));
    reply.setLayer(layerName(layer).toLatin1());
    return reply;
}

Layer layerOf(Code code)
{
    return code == Code::Unavailable ? Layer::None : Layer::Rejected;
}

Code codeOf(const core::Error &error)
{
    switch (error.code) {
    case core::ErrorCode::BadSignature: return Code::BadSignature;
    case core::ErrorCode::InvalidInput: return Code::InvalidNotification;
    case core::ErrorCode::NotFound: return Code::UnknownOrder;
    default: return Code::Unavailable;
    }
}

QJsonObject refundJson(const core::RefundRecord &r)
{
    return QJsonObject{
        {QStringLiteral("refund_no"), r.refundNo},
        {QStringLiteral("compensation_id"), r.compensationId},
        {QStringLiteral("status"), core::refundStatusName(r.status)},
        {QStringLiteral("order_no"), r.orderNo},
        {QStringLiteral("channel"), core::channelName(r.channel)},
        {QStringLiteral("pay_no"), r.payNo},
        {QStringLiteral("payment_no"), r.paymentNo},
        {QStringLiteral("amount"), formatAmountFen(r.amountFen)},
        {QStringLiteral("own_payment"), r.ownPayment},
        {QStringLiteral("partial"), r.partial},
        {QStringLiteral("items"), refundItemsJson(r.items)},
        {QStringLiteral("attempts"), r.attempts},
        {QStringLiteral("last_error"), r.lastError.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(r.lastError)},
        {QStringLiteral("updated_at"), isoTime(r.updatedAtMs)}};
}

} // namespace

HttpReply RefundCallbacks::handle(core::Channel channel, const HttpRequest &request) const
{
    const qint64 now = m_clock.nowMs();
    auto verified = m_verifier.verifyRefund(callbackDeliveryOf(channel, request, now), true, now);
    if (!verified)
        return platformReply(channel, codeOf(verified.error()), verified.error().publicMessage,
                             layerOf(codeOf(verified.error())));
    auto settled = m_refunds.settle(verified.value());
    if (!settled)
        return platformReply(channel, codeOf(settled.error()), settled.error().publicMessage,
                             layerOf(codeOf(settled.error())));
    if (settled.value() == core::RefundSettlement::Unknown)
        return platformReply(channel, Code::UnknownOrder, QStringLiteral("no such refund"), Layer::Rejected);
    return platformReply(channel, Code::Success, {},
                         settled.value() == core::RefundSettlement::AlreadySettled ? Layer::StateMachine : Layer::None);
}

std::optional<HttpReply> RefundCallbacks::interceptAlipay(const HttpRequest &request) const
{
    const qint64 now = m_clock.nowMs();
    // A payment's form is passed on without its signature checked here: the payment path
    // verifies it (once).
    const core::RawDelivery delivery = callbackDeliveryOf(core::Channel::Alipay, request, now);
    if (!m_verifier.mayBeRefund(delivery) || !m_verifier.verifyRefund(delivery, true, now))
        return std::nullopt;
    return handle(core::Channel::Alipay, request);
}

void registerRefundRoutes(HttpServer &server, const RefundCallbacks &callbacks, core::RefundStore &store)
{
    server.route(Method::Post, QStringLiteral("/api/v1/callbacks/wechat/refund"),
                 platformCallbackRouteOptions(core::Channel::WeChat),
                 [&](const HttpRequest &request) { return callbacks.handle(core::Channel::WeChat, request); });
    server.route(Method::Post, QStringLiteral("/api/v1/callbacks/alipay/refund"),
                 platformCallbackRouteOptions(core::Channel::Alipay),
                 [&](const HttpRequest &request) { return callbacks.handle(core::Channel::Alipay, request); });

    server.route(Method::Get, QStringLiteral("/api/v1/refunds"), Role::Viewer, [&](const HttpRequest &request) {
        const QString orderNo = request.query.queryItemValue(QStringLiteral("order_no"));
        if (!core::isValidBusinessId(orderNo))
            return errorReply(QStringLiteral("invalid_request"),
                              QStringLiteral("order_no must be 1-64 of [A-Za-z0-9_-]"));
        auto rows = store.ofOrder(orderNo);
        if (!rows)
            return errorReply(rows.error());
        QJsonArray list;
        for (const core::RefundRecord &r : rows.value())
            list.append(refundJson(r));
        return HttpReply::json(list);
    });
}

} // namespace payonce::http
