#pragma once

#include "httpserver.h"

#include "core/common/channel.h"

#include <optional>

namespace payonce::core {
class Clock;
class RefundNotificationVerifier;
class RefundService;
class RefundStore;
} // namespace payonce::core

namespace payonce::http {

/// The platforms' refund notifications, answered in each platform's dialect like
/// the payment callbacks: verified (signature, time window, decrypted) by the refund
/// verifier, then settled by core::RefundService — 20 copies of one notification settle
/// the refund once and all get SUCCESS. A notification naming no refund of ours, or not
/// matching it, is 400 FAIL; a bad signature 401; a storage failure 500 (retried).
class RefundCallbacks {
public:
    RefundCallbacks(const core::RefundNotificationVerifier &verifier, core::RefundService &refunds,
                    const core::Clock &clock)
        : m_verifier(verifier), m_refunds(refunds), m_clock(clock)
    {
    }
    HttpReply handle(core::Channel channel, const HttpRequest &request) const;
    /// For the Alipay payment route: the reply when the delivery verifies as a refund
    /// notification, nullopt otherwise (the payment path then judges it).
    std::optional<HttpReply> interceptAlipay(const HttpRequest &request) const;

private:
    const core::RefundNotificationVerifier &m_verifier;
    core::RefundService &m_refunds;
    const core::Clock &m_clock;
};

/// POST /api/v1/callbacks/wechat/refund and /api/v1/callbacks/alipay/refund (no token: the
/// signature authenticates), and GET /api/v1/refunds?order_no=... (viewer): the order's
/// refunds with status, attempts and last error.
void registerRefundRoutes(HttpServer &server, const RefundCallbacks &callbacks, core::RefundStore &store);

} // namespace payonce::http
