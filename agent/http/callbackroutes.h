#pragma once

#include "httpserver.h"

#include <functional>
#include <optional>

namespace payonce::core {
class CallbackPipeline;
class Clock;
} // namespace payonce::core

namespace payonce::http {

/// The platforms' retries (docs/openapi.yaml, "Callbacks"): POST /api/v1/callbacks/wechat and
/// /alipay. No bearer token: the platform's signature is the authentication, checked by
/// the pipeline's verifier on the raw body. The routes copy the delivery (headers, raw
/// bytes, arrival time) and answer in each platform's own dialect — WeChat
/// {"code":"SUCCESS"|"FAIL","message"}, Alipay the plain text "success" / "failure" —
/// with X-Payonce-Layer naming the deciding layer.
///
/// alipayRefunds, if set, sees every Alipay delivery first and answers the refund
/// notifications among them (nullopt: not a refund notification, the payment path goes on).
using AlipayRefundInterceptor = std::function<std::optional<HttpReply>(const HttpRequest &)>;
void registerCallbackRoutes(HttpServer &server, core::CallbackPipeline &pipeline, const core::Clock &clock,
                            AlipayRefundInterceptor alipayRefunds = {});

} // namespace payonce::http
