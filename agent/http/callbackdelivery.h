#pragma once

#include "httpserver.h"
#include "httptypes.h"

#include "core/callback/paymentnotification.h"
#include "core/common/channel.h"

namespace payonce::http {

/// A platform's delivery as the verifiers need it: the raw body, the arrival time and the
/// signature headers only (Wechatpay-* and Content-Type), not cookies or proxies' additions.
core::RawDelivery callbackDeliveryOf(core::Channel channel, const HttpRequest &request, qint64 nowMs);

/// How a route the platform notifies is run: on the callback lane, its server-made replies
/// layered "rejected", and a full lane answered 503 in the platform's dialect of failure
/// (WeChat {"code":"FAIL"}, Alipay "failure"), so the platform sends the notification again.
RouteOptions platformCallbackRouteOptions(core::Channel channel);

} // namespace payonce::http
