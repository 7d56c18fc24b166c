#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/result.h"
#include "core/settlement/refundnotification.h"
#include "crypto/rsakeys.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

#include <optional>

namespace payonce::platform::alipay {

/// Alipay OpenAPI RSA2 (SHA256withRSA, base64) signatures, as the platform documents them:
///
/// - a request (the gateway's form parameters) is signed over its parameters sorted by
///   name as "k1=v1&k2=v2..." with raw (not URL-encoded) values, leaving out `sign` and
///   empty values; `sign_type` IS included for requests;
/// - an asynchronous notification is signed over every parameter received but `sign` AND
///   `sign_type`, sorted, empty values KEPT (`body=`): what Alipay's own verifiers do (the
///   Java SDK's getSignCheckContentV1, the Node SDK's notify check);
/// - a response `{"alipay_trade_query_response":{...},"sign":"..."}` is signed over the
///   exact JSON text of the response object as it appears in the body, so the verifier
///   must take that text from the raw body, never re-serialise it.
///
/// Stateless functions; all thread-safe.
using Params = QList<QPair<QByteArray, QByteArray>>;

enum class SignContentKind {
    Request,
    Notification
};
QByteArray signContent(const Params &params, SignContentKind kind = SignContentKind::Request);

/// sign_type=RSA2 signature of signContent(params, kind), base64.
core::Result<QByteArray> signParams(const crypto::PrivateKey &key, const Params &params,
                                    SignContentKind kind = SignContentKind::Request);
/// True when params' `sign` verifies over signContent(params, kind).
bool verifyParams(const crypto::PublicKey &key, const Params &params, SignContentKind kind = SignContentKind::Request);

/// "alipay.trade.precreate" → "alipay_trade_precreate_response".
QByteArray responseKey(QByteArrayView method);

/// The raw JSON text of the value of top-level member `key` in a JSON object text, exactly
/// as it appears (no re-serialisation); nullopt when absent or the text is malformed.
std::optional<QByteArray> rawMember(QByteArrayView json, QByteArrayView key);

/// The verified response object of method: BadSignature when `sign` is missing, the
/// response member is missing, or the signature does not verify over its raw text.
core::Result<QByteArray> verifiedResponse(const crypto::PublicKey &alipayKey, QByteArrayView body,
                                          QByteArrayView method);

/// {"<method>_response":<responseObjectJson>,"sign":"<signature>"} — how the platform (and
/// the simulator) frames a signed response.
QByteArray frameResponse(QByteArrayView method, QByteArrayView responseObjectJson, QByteArrayView signatureBase64);

// ---- Notifications -------------------------------------------------------------------

/// Parses an application/x-www-form-urlencoded body into (name, value) pairs with
/// URL-decoded names and values ('+' is a space). InvalidInput when the body is empty or
/// over the size limit, a pair has no '=' or an empty name, a '%' is not followed by two
/// hex digits, or a name repeats.
core::Result<Params> parseForm(QByteArrayView body);

/// Checks the RSA2 signature: sign present, sign_type RSA2 (when present), and sign
/// verifying over signContent(params, Notification) with the Alipay public key.
/// BadSignature otherwise.
core::Result<void> verifySignature(const crypto::PublicKey &alipayKey, const Params &params);

/// The notification fields. InvalidInput when notify_id, trade_no, out_trade_no,
/// trade_status, seller_id or app_id is missing, trade_no/out_trade_no is outside the
/// format, or total_amount is not a positive decimal yuan amount with at most two places
/// (parseAmountFen). Currency is CNY (Alipay's notify carries none for domestic trades).
/// paid = trade_status TRADE_SUCCESS or TRADE_FINISHED.
core::Result<core::PaymentNotification> parseNotify(const Params &params);

/// A refund's trade_status_sync: the notify carries out_biz_no or refund_fee (Alipay sends
/// a trade's refunds to its notify_url too, so a payment route sees them). Decide only on
/// a verified form.
bool isRefundNotify(const Params &params);

/// The refund fields of a verified trade_status_sync. InvalidInput when notify_id,
/// trade_status, seller_id, app_id or gmt_refund is missing; trade_no, out_trade_no or
/// out_biz_no is outside the format; refund_fee or total_amount is not a positive yuan
/// amount with at most two places, or refund_fee > total_amount. state Success (Alipay
/// notifies successful refunds only); refundedTotalFen = refund_fee; amountFen unset.
core::Result<core::RefundNotification> parseRefundNotify(const Params &params);

} // namespace payonce::platform::alipay
