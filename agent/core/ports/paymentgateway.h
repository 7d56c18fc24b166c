#pragma once

#include "core/common/channel.h"
#include "core/common/result.h"

#include <QString>

namespace payonce::core {

/// What the confirm path asks a platform to create: a Native (QR code) payment for one
/// payment record. paymentNo is our out_trade_no — the idempotency key at the platform:
/// creating the same paymentNo twice must not make a second charge possible.
struct GatewayOrderRequest {
    QString paymentNo; ///< out_trade_no (WeChat) / out_trade_no (Alipay); 6-32 of [A-Za-z0-9_-]
    QString orderNo;   ///< ours, for the description and attach fields
    qint64 amountFen = 0;
    QString description;
    QString notifyUrl;   ///< where the platform delivers the payment notification
    QString traceParent; ///< W3C traceparent to propagate, may be empty
};

struct GatewayOrder {
    QString codeUrl; ///< the QR payload (WeChat code_url / Alipay qr_code)
};

/// The platform's view of one out_trade_no.
enum class GatewayTradeState {
    NotFound, ///< the platform never created it
    NotPaid,  ///< created, not paid (WeChat NOTPAY/USERPAYING, Alipay WAIT_BUYER_PAY)
    Paid,     ///< WeChat SUCCESS, Alipay TRADE_SUCCESS / TRADE_FINISHED
    Closed,   ///< closed or revoked without payment
    Refunded, ///< WeChat REFUND (paid, then refunded)
};

/// The state's name in findings and logs: not_found, not_paid, paid, closed, refunded.
inline QString tradeStateName(GatewayTradeState state)
{
    switch (state) {
    case GatewayTradeState::NotFound: return QStringLiteral("not_found");
    case GatewayTradeState::NotPaid: return QStringLiteral("not_paid");
    case GatewayTradeState::Paid: return QStringLiteral("paid");
    case GatewayTradeState::Closed: return QStringLiteral("closed");
    case GatewayTradeState::Refunded: return QStringLiteral("refunded");
    }
    return QStringLiteral("unknown");
}

struct GatewayTrade {
    GatewayTradeState state = GatewayTradeState::NotFound;
    QString payNo;        ///< the platform's transaction_id / trade_no, when paid
    qint64 amountFen = 0; ///< what the platform says was paid, when paid
    QString codeUrl;      ///< for NotPaid, when the platform returns it again (may be empty)
};

/// What the refund compensation asks a platform to refund: part or all of one paid trade.
/// refundNo is our out_refund_no (WeChat) / out_request_no (Alipay) — the idempotency key
/// of the refund at the platform: the same refundNo twice never refunds twice; the second
/// request answers the first refund.
struct GatewayRefundRequest {
    QString paymentNo;    ///< out_trade_no of the paid trade
    QString payNo;        ///< the platform's transaction_id / trade_no; optional (empty: by paymentNo)
    QString refundNo;     ///< out_refund_no / out_request_no; 1-64 of [A-Za-z0-9_-]
    qint64 amountFen = 0; ///< this refund, > 0; the refunds of one trade never sum above totalFen
    qint64 totalFen = 0;  ///< the trade's total as paid (WeChat amount.total; Alipay checks its own)
    QString reason;       ///< shown to the payer; may be empty
    QString notifyUrl;    ///< where the refund notification goes (Alipay: the trade's notify_url when empty)
};

/// The platform's view of one refund.
enum class GatewayRefundState {
    NotFound,   ///< queryRefund only: the platform has no refund of that refundNo (nothing refunded)
    Processing, ///< accepted, money not yet back (WeChat PROCESSING); a notification will follow
    Success,    ///< the money went back (WeChat SUCCESS, Alipay code 10000 / REFUND_SUCCESS)
    Closed,     ///< WeChat CLOSED: the refund was closed without refunding
    Abnormal,   ///< WeChat ABNORMAL: stuck (the payer's card frozen, …), awaiting manual handling; may still pay out
};

struct GatewayRefund {
    GatewayRefundState state = GatewayRefundState::NotFound;
    QString refundNo;     ///< ours, as the platform echoed it
    QString refundId;     ///< WeChat refund_id; Alipay has no refund id of its own: empty
    QString paymentNo;    ///< out_trade_no
    QString payNo;        ///< transaction_id / trade_no
    qint64 amountFen = 0; ///< this refund, as the platform says (0 for NotFound)
};

/// One payment platform's merchant API, as the confirm path, the patrol, order close and
/// the refund compensation use it. One instance per channel; calls block the calling (worker) thread and are
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

    /// Refunds part or all of a paid trade (WeChat POST /v3/refund/domestic/refunds,
    /// Alipay alipay.trade.refund). Idempotent by request.refundNo at the platform: sending
    /// the SAME request again — a retry after Unavailable or BadSignature — answers the
    /// refund already made and never refunds twice. A new refundNo is a new refund.
    /// Success: the refund as the platform answered it — Processing (WeChat: the
    /// notification or queryRefund tells the end), Success, Abnormal (open: manual handling
    /// at the platform decides) or Closed (failed,
    /// nothing refunded).
    /// Errors, besides the common ones above (Unavailable/BadSignature: outcome unknown,
    /// retry with the same refundNo or ask queryRefund):
    /// - NotFound: the platform knows no trade of that paymentNo / payNo;
    /// - Conflict: the platform refused this refund for the trade's or the merchant's
    ///   state — over-refund (the refunds would exceed the amount paid), the trade not
    ///   paid or closed, refundNo used before with other parameters, the merchant's
    ///   balance too low; nothing was refunded;
    /// - InvalidInput: malformed request (refused before sending, or PARAM_ERROR).
    virtual Result<GatewayRefund> refund(const GatewayRefundRequest &request) = 0;
    /// The platform's view of the refund refundNo (WeChat GET
    /// /v3/refund/domestic/refunds/{out_refund_no}; Alipay alipay.trade.fastpay.refund.query
    /// with out_request_no — Alipay also needs the trade, hence paymentNo). A refund the
    /// platform does not know is a successful answer with state NotFound: nothing was
    /// refunded under that refundNo, so submitting it again is safe. Read-only; errors as above.
    virtual Result<GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo) = 0;
};

} // namespace payonce::core
