#pragma once

#include "httptypes.h"

#include "core/channel.h"
#include "core/paymentnotification.h"

namespace payonce::http {

/// A platform's delivery as the verifiers need it: the raw body, the arrival time and the
/// signature headers only (Wechatpay-* and Content-Type), not cookies or proxies' additions.
core::RawDelivery callbackDeliveryOf(core::Channel channel, const HttpRequest &request, qint64 nowMs);

} // namespace payonce::http
