#include "callbackroutes.h"

#include "errormapping.h"

#include "core/callbackpipeline.h"
#include "core/ports/clock.h"
#include "shared/layer.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::http {

namespace {

core::RawDelivery deliveryOf(core::Channel channel, const HttpRequest &request, qint64 nowMs)
{
    core::RawDelivery delivery;
    delivery.channel = channel;
    delivery.body = request.body;
    delivery.receivedAtMs = nowMs;
    // Only what verification and the record need: the signature headers, not cookies or
    // proxies' additions.
    for (const auto &[name, value] : request.headers) {
        if (name.toLower().startsWith("wechatpay-") || name.compare("Content-Type", Qt::CaseInsensitive) == 0)
            delivery.headers.append({name, value});
    }
    return delivery;
}

HttpReply weChatReply(const core::CallbackOutcome &outcome)
{
    const QJsonObject body{{QStringLiteral("code"), outcome.success() ? QStringLiteral("SUCCESS") : QStringLiteral("FAIL")},
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

void registerCallbackRoutes(HttpServer &server, core::CallbackPipeline &pipeline, const core::Clock &clock)
{
    RouteOptions options;
    options.rejectionLayer = QByteArrayLiteral("rejected");
    server.route(Method::Post, QStringLiteral("/api/v1/callbacks/wechat"), options, [&](const HttpRequest &request) {
        return weChatReply(pipeline.handle(deliveryOf(core::Channel::WeChat, request, clock.nowMs())));
    });
    server.route(Method::Post, QStringLiteral("/api/v1/callbacks/alipay"), options, [&](const HttpRequest &request) {
        return alipayReply(pipeline.handle(deliveryOf(core::Channel::Alipay, request, clock.nowMs())));
    });
}

} // namespace payonce::http
