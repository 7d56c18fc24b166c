#include "callbackdelivery.h"

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

} // namespace payonce::http
