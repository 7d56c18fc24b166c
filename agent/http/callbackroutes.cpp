#include "callbackroutes.h"

#include "callbackdelivery.h"
#include "errormapping.h"

#include "core/callback/callbackpipeline.h"
#include "core/ports/clock.h"
#include "shared/layer.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::http {

namespace {

HttpReply weChatReply(const core::CallbackOutcome &outcome)
{
    const QJsonObject body{
        {QStringLiteral("code"), outcome.success() ? QStringLiteral("SUCCESS") : QStringLiteral("FAIL")},
        {QStringLiteral("message"), outcome.success() ? QStringLiteral("OK") : outcome.message}};
    HttpReply reply = HttpReply::json(body, httpStatus(outcome.code));
    reply.setLayer(layerName(outcome.layer).toLatin1());
    return reply;
}

HttpReply alipayReply(const core::CallbackOutcome &outcome)
{
    HttpReply reply = HttpReply::text(outcome.success() ? QByteArrayLiteral("success") : QByteArrayLiteral("failure"),
                                      httpStatus(outcome.code));
    reply.setLayer(layerName(outcome.layer).toLatin1());
    return reply;
}

} // namespace

void registerCallbackRoutes(HttpServer &server, core::CallbackPipeline &pipeline, const core::Clock &clock,
                            AlipayRefundInterceptor alipayRefunds)
{
    // Deferred: a copy the seen set answers (or a rejection) is answered once its delivery
    // row has committed in a group commit, and the lane's thread meanwhile verifies the
    // next notification. A copy memory alone answers (bytes verified before, pay_no seen
    // processed here) is taken on the event loop and never waits for a lane's thread.
    server.routeDeferred(
        Method::Post, QStringLiteral("/api/v1/callbacks/wechat"), platformCallbackRouteOptions(core::Channel::WeChat),
        [&](const HttpRequest &request, const ReplySink &sink) {
            return pipeline.handleFromMemory(
                callbackDeliveryOf(core::Channel::WeChat, request, clock.nowMs()),
                [sink](const core::CallbackOutcome &outcome) { sink.send(weChatReply(outcome)); });
        },
        [&](const HttpRequest &request, const ReplySink &sink) {
            pipeline.handle(callbackDeliveryOf(core::Channel::WeChat, request, clock.nowMs()),
                            [sink](const core::CallbackOutcome &outcome) { sink.send(weChatReply(outcome)); });
        });
    // Alipay's memory-first try comes before the refund interceptor, and may: the bytes it
    // finds were verified as a payment, so the interceptor declined them once, and its
    // decision depends on the bytes alone (a refund's fields, then their signature).
    server.routeDeferred(
        Method::Post, QStringLiteral("/api/v1/callbacks/alipay"), platformCallbackRouteOptions(core::Channel::Alipay),
        [&](const HttpRequest &request, const ReplySink &sink) {
            return pipeline.handleFromMemory(
                callbackDeliveryOf(core::Channel::Alipay, request, clock.nowMs()),
                [sink](const core::CallbackOutcome &outcome) { sink.send(alipayReply(outcome)); });
        },
        [&, alipayRefunds](const HttpRequest &request, const ReplySink &sink) {
            // Alipay sends a trade's refund notifications to the trade's notify_url too.
            if (alipayRefunds) {
                if (auto reply = alipayRefunds(request)) {
                    sink.send(*reply);
                    return;
                }
            }
            pipeline.handle(callbackDeliveryOf(core::Channel::Alipay, request, clock.nowMs()),
                            [sink](const core::CallbackOutcome &outcome) { sink.send(alipayReply(outcome)); });
        });
}

} // namespace payonce::http
