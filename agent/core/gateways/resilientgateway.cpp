#include "core/gateways/resilientgateway.h"

namespace payonce::core {

template <typename T>
Result<T> ResilientGateway::guarded(const std::function<Result<T>()> &call)
{
    const auto permit = m_breaker.tryAcquire();
    if (!permit) {
        return Error::make(ErrorCode::Unavailable, QStringLiteral("breaker %1 open").arg(m_breaker.name()),
                           QStringLiteral("breaker open"));
    }
    Result<T> result = m_retry.run<T>(call);
    m_breaker.onResult(*permit, result.ok() || !RetryPolicy::isRetryable(result.error()));
    return result;
}

Result<GatewayOrder> ResilientGateway::createOrder(const GatewayOrderRequest &request)
{
    return guarded<GatewayOrder>([&] { return m_inner.createOrder(request); });
}

Result<GatewayTrade> ResilientGateway::query(const QString &paymentNo)
{
    return guarded<GatewayTrade>([&] { return m_inner.query(paymentNo); });
}

Result<void> ResilientGateway::close(const QString &paymentNo)
{
    return guarded<void>([&] { return m_inner.close(paymentNo); });
}

Result<GatewayRefund> ResilientGateway::refund(const GatewayRefundRequest &request)
{
    // Every attempt sends the same request, so the same refundNo: the platform refunds it
    // once however many attempts reach it.
    return guarded<GatewayRefund>([&] { return m_inner.refund(request); });
}

Result<GatewayRefund> ResilientGateway::queryRefund(const QString &paymentNo, const QString &refundNo)
{
    return guarded<GatewayRefund>([&] { return m_inner.queryRefund(paymentNo, refundNo); });
}

} // namespace payonce::core
