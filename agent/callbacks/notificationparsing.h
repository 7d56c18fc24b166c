#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/result.h"
#include "core/settlement/refundnotification.h"
#include "gateway/alipaysignature.h"
#include "gateway/wechatsignature.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QStringView>

/// The pure steps of verifying a platform notification, one function per step, so the
/// verifier (routes, replay, worker) and the fuzz targets run exactly the same code.
/// No I/O, no state; all thread-safe. Error codes follow core::NotificationVerifier:
/// InvalidInput for a body that is not what the platform sends, BadSignature for
/// anything about authenticity.
namespace payonce::callbacks {

/// Bodies above this are refused (InvalidInput) before anything else is looked at: a
/// real notification is about 1 KiB (WeChat) or 2 KiB (Alipay).
inline constexpr qsizetype kMaxNotificationBodyBytes = 64 * 1024;

/// 1–64 of [A-Za-z0-9_-]: the pay_no and out_trade_no format (docs/openapi.yaml).
bool isValidTradeNo(QStringView text);

// ---- WeChat Pay v3 -----------------------------------------------------------------

/// What the envelope (the signed JSON body) carries. Parsing it comes before the
/// signature check only so that a body which is not the platform's shape (truncated, not
/// JSON) is InvalidInput as the port says; nothing here is trusted until verified.
struct WeChatEnvelope {
    QString id;
    QString eventType;
    QByteArray algorithm;
    QByteArray ciphertext;
    QByteArray associatedData;
    QByteArray nonce;
};

/// InvalidInput when the body is over the size limit, not a JSON object, or lacks id,
/// event_type or a resource with string algorithm, ciphertext, nonce (associated_data may
/// be absent or empty: the platform says it "can be left blank").
core::Result<WeChatEnvelope> parseWeChatEnvelope(QByteArrayView body);

/// The Wechatpay-* headers of a delivery (case-insensitive names; missing ones empty).
gateway::wechat::SignedHeaders weChatSignedHeaders(const core::RawDelivery &delivery);

/// Checks the envelope's content: event_type TRANSACTION.SUCCESS and algorithm
/// AEAD_AES_256_GCM, else InvalidInput.
core::Result<void> checkWeChatEnvelope(const WeChatEnvelope &envelope);

/// Decrypts resource.ciphertext under the APIv3 key with the envelope's nonce and
/// associated_data. BadSignature for any authentication failure (tampered ciphertext,
/// wrong associated data or nonce, wrong key, malformed base64).
core::Result<QByteArray> decryptWeChatResource(QByteArrayView apiv3Key, const WeChatEnvelope &envelope);

/// Parses the decrypted transaction object into a notification (channel WeChat, eventId
/// from the envelope). InvalidInput when it is not a JSON object, transaction_id or
/// out_trade_no is outside [A-Za-z0-9_-]{1,64}, amount.total is not a positive whole
/// number, mchid, appid or trade_state is missing, or amount.currency is not three capital
/// letters. paid = trade_state == "SUCCESS". mchid/appid are returned, never compared.
core::Result<core::PaymentNotification> parseWeChatTransaction(QByteArrayView plaintext, const QString &eventId);

/// The refund notification's content: event_type REFUND.SUCCESS, REFUND.ABNORMAL or
/// REFUND.CLOSED and algorithm AEAD_AES_256_GCM, else InvalidInput (a payment's
/// TRANSACTION.SUCCESS included).
core::Result<void> checkWeChatRefundEnvelope(const WeChatEnvelope &envelope);

/// Parses the decrypted refund object (associated data "refund") into a refund
/// notification (channel WeChat, eventId from the envelope). InvalidInput when it is not
/// a JSON object; out_refund_no, refund_id, out_trade_no or transaction_id is outside
/// [A-Za-z0-9_-]{1,64}; mchid is missing; refund_status is not SUCCESS, CLOSED or
/// ABNORMAL, or not the one eventType names (REFUND.SUCCESS carries SUCCESS, …);
/// amount.refund or amount.total is not a positive whole number, or refund > total.
core::Result<core::RefundNotification> parseWeChatRefund(QByteArrayView plaintext, const QString &eventId,
                                                         const QString &eventType);

// ---- Alipay -------------------------------------------------------------------------

/// Parses an application/x-www-form-urlencoded body into (name, value) pairs with
/// URL-decoded names and values ('+' is a space). InvalidInput when the body is empty or
/// over the size limit, a pair has no '=' or an empty name, a '%' is not followed by two
/// hex digits, or a name repeats.
core::Result<gateway::alipay::Params> parseForm(QByteArrayView body);

/// Checks the RSA2 signature: sign present, sign_type RSA2 (when present), and sign
/// verifying over signContent(params, Notification) with the Alipay public key.
/// BadSignature otherwise.
core::Result<void> verifyAlipaySignature(const crypto::PublicKey &alipayKey, const gateway::alipay::Params &params);

/// The notification fields. InvalidInput when notify_id, trade_no, out_trade_no,
/// trade_status, seller_id or app_id is missing, trade_no/out_trade_no is outside the
/// format, or total_amount is not a positive decimal yuan amount with at most two places
/// (parseAmountFen). Currency is CNY (Alipay's notify carries none for domestic trades).
/// paid = trade_status TRADE_SUCCESS or TRADE_FINISHED.
core::Result<core::PaymentNotification> parseAlipayNotify(const gateway::alipay::Params &params);

/// A refund's trade_status_sync: the notify carries out_biz_no or refund_fee (Alipay sends
/// a trade's refunds to its notify_url too, so a payment route sees them). Decide only on
/// a verified form.
bool isAlipayRefundNotify(const gateway::alipay::Params &params);

/// The refund fields of a verified trade_status_sync. InvalidInput when notify_id,
/// trade_status, seller_id, app_id or gmt_refund is missing; trade_no, out_trade_no or
/// out_biz_no is outside the format; refund_fee or total_amount is not a positive yuan
/// amount with at most two places, or refund_fee > total_amount. state Success (Alipay
/// notifies successful refunds only); refundedTotalFen = refund_fee; amountFen unset.
core::Result<core::RefundNotification> parseAlipayRefundNotify(const gateway::alipay::Params &params);

} // namespace payonce::callbacks
