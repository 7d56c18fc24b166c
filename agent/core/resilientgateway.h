#pragma once

#include "core/circuitbreaker.h"
#include "core/ports/paymentgateway.h"
#include "core/retrypolicy.h"

namespace payonce::core {

/// A PaymentGateway decorator: breaker(retry(call)) around every call of the wrapped
/// gateway (whose own client enforces the timeout).
///
/// An open (or forced_open) breaker fails the call fast with Unavailable ("breaker open")
/// without calling the gateway. Otherwise the call runs under the RetryPolicy, and the
/// retried call's final outcome is reported to the breaker: Unavailable and BadSignature
/// count as failures (the platform is not answering properly); success and a platform's
/// business refusal (InvalidInput, Conflict, …) count as success — the platform answered.
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

    CircuitBreaker &breaker() { return m_breaker; }

private:
    template<typename T>
    Result<T> guarded(const std::function<Result<T>()> &call);

    PaymentGateway &m_inner;
    CircuitBreaker &m_breaker;
    RetryPolicy m_retry;
};

} // namespace payonce::core
