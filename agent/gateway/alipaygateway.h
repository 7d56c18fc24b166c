#pragma once

#include "core/ports/paymentgateway.h"
#include "crypto/rsakeys.h"

#include <QString>

namespace payonce::gateway {

/// What an AlipayGateway needs: the app's identity and RSA2 key pair half, Alipay's public
/// key, the gateway URL, and how long one call may take.
struct AlipayOptions {
    QString appId;
    QString sellerId; ///< checked against query answers when they carry it
    crypto::PrivateKey appPrivateKey;
    crypto::PublicKey alipayPublicKey;
    QString baseUrl = QStringLiteral("https://openapi.alipay.com"); ///< the gateway is <baseUrl>/gateway.do
    int timeoutMs = 10000;
};

/// Alipay OpenAPI (face-to-face, QR code): alipay.trade.precreate (qr_code → codeUrl),
/// alipay.trade.query, alipay.trade.close, as form POSTs to <baseUrl>/gateway.do with RSA2
/// request signatures. Implements core::PaymentGateway, whose contract (blocking,
/// thread-safe, error codes) holds; in detail:
///
/// - every answer's `sign` must verify with the Alipay public key over the raw text of the
///   `<method>_response` object — otherwise BadSignature (one exception: an UNSIGNED
///   40002/40006 answer, which Alipay sends when it refused our signature or app, is
///   Misconfigured: it claims nothing about a trade);
/// - timeouts, transport failures, HTTP 5xx, code 20000 and ACQ.SYSTEM_ERROR →
///   Unavailable; 40002 isv.invalid-signature / isv.invalid-app-id and 40006 →
///   Misconfigured; ACQ.TRADE_HAS_SUCCESS, ACQ.TRADE_HAS_CLOSE, ACQ.TRADE_STATUS_ERROR,
///   ACQ.CONTEXT_INCONSISTENT → Conflict; other 40001/40002/40004 → InvalidInput;
/// - query: ACQ.TRADE_NOT_EXIST is a successful answer with state NotFound;
///   WAIT_BUYER_PAY → NotPaid, TRADE_SUCCESS/TRADE_FINISHED → Paid (trade_no,
///   total_amount as fen), TRADE_CLOSED → Closed;
/// - close: success, ACQ.TRADE_NOT_EXIST → success (idempotent); a paid trade
///   (ACQ.TRADE_STATUS_ERROR) → Conflict;
/// - refund (alipay.trade.refund: out_trade_no, trade_no when payNo is given,
///   refund_amount as a yuan string, out_request_no = refundNo, refund_reason; notify_url
///   when given): Alipay refunds synchronously — code 10000 is Success (fund_change "N"
///   included: the same out_request_no was refunded before, nothing moved this time);
///   amountFen is the request's (Alipay answers the trade's cumulative refund_fee, not
///   this refund's); refundId stays empty (Alipay has none). ACQ.TRADE_NOT_EXIST →
///   NotFound; ACQ.REFUND_AMT_NOT_EQUAL_TOTAL (over-refund), ACQ.SELLER_BALANCE_NOT_ENOUGH,
///   ACQ.TRADE_STATUS_ERROR, ACQ.TRADE_HAS_CLOSE → Conflict: nothing was refunded;
/// - queryRefund (alipay.trade.fastpay.refund.query: out_trade_no, out_request_no): an
///   answer without out_request_no/refund_amount means "no such refund" → state NotFound;
///   refund_status REFUND_SUCCESS (or absent, as Alipay documents) → Success;
/// - request.traceParent, when given, goes out as the `traceparent` header.
class AlipayGateway final : public core::PaymentGateway {
public:
    explicit AlipayGateway(AlipayOptions options);

    core::Channel channel() const override { return core::Channel::Alipay; }
    core::Result<core::GatewayOrder> createOrder(const core::GatewayOrderRequest &request) override;
    core::Result<core::GatewayTrade> query(const QString &paymentNo) override;
    core::Result<void> close(const QString &paymentNo) override;
    core::Result<core::GatewayRefund> refund(const core::GatewayRefundRequest &request) override;
    core::Result<core::GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo) override;

private:
    struct Reply;
    core::Result<Reply> call(const QByteArray &method, const QByteArray &bizContent, const QString &notifyUrl,
                             const QString &traceParent);
    AlipayOptions m_options;
};

} // namespace payonce::gateway
