#include "callbackdelivery.h"

#include <QJsonObject>

namespace payonce::http {

core::RawDelivery callbackDeliveryOf(core::Channel channel, const HttpRequest &request, qint64 nowMs)
{
    core::RawDelivery delivery;
    delivery.channel = channel;
    delivery.body = request.body;
    delivery.receivedAtMs = nowMs;
    delivery.traceId = request.traceId;
    for (const auto &[name, value] : request.headers) {
        if (name.toLower().startsWith("wechatpay-") || name.compare("Content-Type", Qt::CaseInsensitive) == 0)
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
