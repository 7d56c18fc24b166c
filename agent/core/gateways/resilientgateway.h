#pragma once

#include "core/gateways/circuitbreaker.h"
#include "core/gateways/retrypolicy.h"
#include "core/ports/paymentgateway.h"

namespace payonce::core {

/// A PaymentGateway decorator: breaker(retry(call)) around every call of the wrapped
/// gateway (whose own client enforces the timeout).
///
/// An open (or forced_open) breaker fails the call fast with Unavailable ("breaker open")
/// without calling the gateway. Otherwise the call runs under the RetryPolicy, and the
/// retried call's final outcome is reported to the breaker: Unavailable and BadSignature
/// count as failures (the platform is not answering properly); success and a platform's
/// business refusal (InvalidInput, Conflict, …) count as success — the platform answered.
///
/// Retrying is safe for every call: createOrder repeats the same out_trade_no, query,
/// queryRefund and close are idempotent, and refund repeats the SAME refundNo
/// (out_refund_no / out_request_no), which the platform refunds at most once — a retried
/// refund whose first attempt did reach the platform answers that first refund.
/// Thread-safe when the wrapped gateway is. Does not own its parts.
class ResilientGateway final : public PaymentGateway {
public:
    ResilientGateway(PaymentGateway &inner, CircuitBreaker &breaker, RetryPolicy retry)
        : m_inner(inner), m_breaker(breaker), m_retry(std::move(retry))
    {
    }

    Channel channel() const override { return m_inner.channel(); }
    Result<GatewayOrder> createOrder(const GatewayOrderRequest &request) override;
    Result<GatewayTrade> query(const QString &paymentNo) override;
    Result<void> close(const QString &paymentNo) override;
    /// breaker(retry(refund)) with the request unchanged across attempts (same refundNo).
    Result<GatewayRefund> refund(const GatewayRefundRequest &request) override;
    Result<GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo) override;

    CircuitBreaker &breaker() { return m_breaker; }

private:
    template <typename T>
    Result<T> guarded(const std::function<Result<T>()> &call);

    PaymentGateway &m_inner;
    CircuitBreaker &m_breaker;
    RetryPolicy m_retry;
};

} // namespace payonce::core
