#pragma once

#include "core/channel.h"
#include "core/result.h"

#include <QString>

namespace payonce::core {

/// What the confirm path asks a platform to create: a Native (QR code) payment for one
/// payment record. paymentNo is our out_trade_no — the idempotency key at the platform:
/// creating the same paymentNo twice must not make a second charge possible.
struct GatewayOrderRequest {
    QString paymentNo;   ///< out_trade_no (WeChat) / out_trade_no (Alipay); 6-32 of [A-Za-z0-9_-]
    QString orderNo;     ///< ours, for the description and attach fields
    qint64 amountFen = 0;
    QString description;
    QString notifyUrl;   ///< where the platform delivers the payment notification
    QString traceParent; ///< W3C traceparent to propagate, may be empty
};

struct GatewayOrder {
    QString codeUrl;     ///< the QR payload (WeChat code_url / Alipay qr_code)
};

/// The platform's view of one out_trade_no.
enum class GatewayTradeState {
    NotFound,   ///< the platform never created it
    NotPaid,    ///< created, not paid (WeChat NOTPAY/USERPAYING, Alipay WAIT_BUYER_PAY)
    Paid,       ///< WeChat SUCCESS, Alipay TRADE_SUCCESS / TRADE_FINISHED
    Closed,     ///< closed or revoked without payment
    Refunded,   ///< WeChat REFUND (paid, then refunded)
};

struct GatewayTrade {
    GatewayTradeState state = GatewayTradeState::NotFound;
    QString payNo;        ///< the platform's transaction_id / trade_no, when paid
    qint64 amountFen = 0; ///< what the platform says was paid, when paid
    QString codeUrl;      ///< for NotPaid, when the platform returns it again (may be empty)
};

/// One payment platform's merchant API, as the confirm path, the patrol and order close
/// use it. One instance per channel; calls block the calling (worker) thread and are
/// thread-safe. Every response is verified (platform signature) before it is believed.
///
/// Errors:
/// - Unavailable: timeout, connection failure, 5xx, or a platform "SYSTEM_ERROR" — the
///   outcome is unknown; retrying the SAME request is safe (out_trade_no is idempotent).
/// - BadSignature: the response's signature did not verify — treated like Unavailable by
///   retry (the call's outcome is unknown) but counted and logged as an attack signal.
/// - InvalidInput / Conflict: the platform refused the request (parameter error, order
///   already paid or closed for this out_trade_no); retrying will not help.
/// - Misconfigured: our keys or merchant ids are wrong (401 from the platform).
class PaymentGateway {
public:
    virtual ~PaymentGateway() = default;
    virtual Channel channel() const = 0;
    virtual Result<GatewayOrder> createOrder(const GatewayOrderRequest &request) = 0;
    virtual Result<GatewayTrade> query(const QString &paymentNo) = 0;
    /// Closes an unpaid trade. Closing one that is already closed or never existed is
    /// success (idempotent); closing a paid one is Conflict.
    virtual Result<void> close(const QString &paymentNo) = 0;
};

} // namespace payonce::core
