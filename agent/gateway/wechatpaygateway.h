#pragma once

#include "core/ports/paymentgateway.h"
#include "crypto/rsakeys.h"
#include "platform/wechatpay.h"

#include <QString>

namespace payonce::gateway {

/// What a WeChatPayGateway needs: merchant identity, the merchant's private key and its
/// certificate serial (to sign requests), the trusted platform keys (to verify
/// responses), where to send, and how long one call may take.
struct WeChatPayOptions {
    QString mchid;
    QString appid;
    QString merchantSerial;
    crypto::PrivateKey merchantKey;
    platform::wechat::PlatformVerifier platformKeys;
    QString baseUrl = QStringLiteral("https://api.mch.weixin.qq.com"); ///< no trailing slash needed
    int timeoutMs = 10000;                                             ///< per HTTP exchange
    qint64 timestampWindowSeconds = platform::wechat::kDefaultTimestampWindowSeconds;
};

/// WeChat Pay API v3, Native (QR code) payments: create (POST /v3/pay/transactions/native),
/// query by out_trade_no (GET /v3/pay/transactions/out-trade-no/{no}?mchid=), close (POST
/// .../{no}/close). Implements core::PaymentGateway, whose contract (blocking, thread-safe,
/// error codes) holds; in detail:
///
/// - every request carries a fresh timestamp and nonce and the merchant's v3 signature;
///   request.traceParent, when given, goes out as the `traceparent` header;
/// - every 2xx and 4xx response must carry a Wechatpay-Signature that verifies with the
///   platform key named by Wechatpay-Serial, over the exact body, within the timestamp
///   window — otherwise BadSignature, whatever the body says;
/// - timeouts, transport failures, 5xx, 429 and the codes SYSTEM_ERROR, BANKERROR,
///   FREQUENCY_LIMITED → Unavailable; 401 (the platform refused our signature) and
///   SIGN_ERROR, NO_AUTH, APPID_MCHID_NOT_MATCH, MCH_NOT_EXISTS → Misconfigured;
///   ORDERPAID, ORDER_CLOSED, OUT_TRADE_NO_USED, TRADE_ERROR → Conflict; PARAM_ERROR,
///   INVALID_REQUEST and other 4xx → InvalidInput;
/// - query: 404 ORDER_NOT_EXIST is a successful answer with state NotFound; trade_state
///   SUCCESS → Paid (transaction_id, amount.total), NOTPAY/USERPAYING → NotPaid,
///   CLOSED/REVOKED/PAYERROR → Closed (PAYERROR is a final failure of that out_trade_no:
///   nothing was paid and it will not be), REFUND → Refunded;
/// - close: 204, ORDER_NOT_EXIST and ORDER_CLOSED are success (idempotent); ORDERPAID is
///   Conflict;
/// - refund (POST /v3/refund/domestic/refunds: transaction_id when payNo is given, else
///   out_trade_no; out_refund_no; reason; notify_url; amount{refund, total, currency CNY}):
///   status PROCESSING/SUCCESS/CLOSED/ABNORMAL → the GatewayRefundState of that name;
///   RESOURCE_NOT_EXISTS/ORDER_NOT_EXIST or 404 → NotFound; INVALID_REQUEST (over-refund,
///   out_refund_no reused with other parameters, trade not paid), NOT_ENOUGH and
///   USER_ACCOUNT_ABNORMAL → Conflict; the rest as above. The same out_refund_no again
///   answers the first refund (the platform's idempotency), so retrying is safe;
/// - queryRefund (GET /v3/refund/domestic/refunds/{out_refund_no}): 404 RESOURCE_NOT_EXISTS
///   is a successful answer with state NotFound; paymentNo, when given, must match the
///   answer's out_trade_no.
class WeChatPayGateway final : public core::PaymentGateway {
public:
    explicit WeChatPayGateway(WeChatPayOptions options);

    core::Channel channel() const override { return core::Channel::WeChat; }
    core::Result<core::GatewayOrder> createOrder(const core::GatewayOrderRequest &request) override;
    core::Result<core::GatewayTrade> query(const QString &paymentNo) override;
    core::Result<void> close(const QString &paymentNo) override;
    core::Result<core::GatewayRefund> refund(const core::GatewayRefundRequest &request) override;
    core::Result<core::GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo) override;

private:
    struct Reply;
    core::Result<Reply> call(QByteArrayView method, const QByteArray &pathAndQuery, const QByteArray &body,
                             const QString &traceParent);
    WeChatPayOptions m_options;
};

/// out_trade_no as both platforms accept it: 6–32 of [A-Za-z0-9_-].
bool isValidOutTradeNo(const QString &paymentNo);
/// out_refund_no / out_request_no as payonce sends them: 1–64 of [A-Za-z0-9_-].
bool isValidOutRefundNo(const QString &refundNo);

} // namespace payonce::gateway
