#include "callbackdelivery.h"

#include <QJsonObject>

namespace payonce::http {

namespace {

// WeChat Pay's Wechatpay-* headers (what its signature covers) and Content-Type (how
// Alipay's form is read). Compared without copies: every notification passes here.
bool isKeptHeader(QByteArrayView name)
{
    constexpr QByteArrayView weChatPrefix("wechatpay-");
    return (name.size() >= weChatPrefix.size()
            && name.first(weChatPrefix.size()).compare(weChatPrefix, Qt::CaseInsensitive) == 0)
           || name.compare("content-type", Qt::CaseInsensitive) == 0;
}

} // namespace

core::RawDelivery callbackDeliveryOf(core::Channel channel, const HttpRequest &request, qint64 nowMs)
{
    core::RawDelivery delivery;
    delivery.channel = channel;
    delivery.body = request.body;
    delivery.receivedAtMs = nowMs;
    delivery.traceId = request.traceId;
    for (const auto &[name, value] : request.headers) {
        if (isKeptHeader(name))
            delivery.headers.append({name, value});
    }
    return delivery;
}

RouteOptions platformCallbackRouteOptions(core::Channel channel)
{
    RouteOptions options;
    options.rejectionLayer = QByteArrayLiteral("rejected");
    options.lane = Lane::Callbacks;
    options.busyReply = [channel] {
        constexpr int kUnavailable = 503;
        if (channel == core::Channel::Alipay)
            return HttpReply::text(QByteArrayLiteral("failure"), kUnavailable);
        return HttpReply::json(QJsonObject{{QStringLiteral("code"), QStringLiteral("FAIL")},
                                           {QStringLiteral("message"), QStringLiteral("busy, send it again")}},
                               kUnavailable);
    };
    return options;
}

} // namespace payonce::http
