#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/result.h"
#include "core/settlement/refundnotification.h"
#include "crypto/rsakeys.h"

#include <QByteArray>
#include <QHash>
#include <QString>

namespace payonce::platform {

/// WeChat Pay API v3 signatures (SHA256withRSA, base64), as the platform documents them:
///
/// - a request is signed over "METHOD\nURL\nTIMESTAMP\nNONCE\nBODY\n", URL being the
///   absolute path with its query string ("/v3/pay/transactions/out-trade-no/X?mchid=1"),
///   BODY empty for GET; the result travels in
///   `Authorization: WECHATPAY2-SHA256-RSA2048 mchid="..",nonce_str="..",signature="..",timestamp="..",serial_no=".."`;
/// - a response or a notification is signed over "TIMESTAMP\nNONCE\nBODY\n" with the
///   platform key named by Wechatpay-Serial, in the headers Wechatpay-Timestamp,
///   Wechatpay-Nonce, Wechatpay-Signature, Wechatpay-Serial.
///
/// Free functions and a small value type; all thread-safe.
/// A platform public key trusted in addition to the configured ones (the simulator's,
/// when the agent starts it): its serial and PEM text.
struct ExtraPlatformKey {
    QString serial;
    QByteArray publicKeyPem;
};

namespace wechat {

inline constexpr QByteArrayView kAuthScheme = "WECHATPAY2-SHA256-RSA2048";
/// How far a response's Wechatpay-Timestamp may be from our clock (both directions).
inline constexpr qint64 kDefaultTimestampWindowSeconds = 300;

QByteArray requestMessage(QByteArrayView method, QByteArrayView urlPathAndQuery, qint64 timestamp, QByteArrayView nonce,
                          QByteArrayView body);
QByteArray responseMessage(QByteArrayView timestamp, QByteArrayView nonce, QByteArrayView body);

/// The Authorization header value for a request already signed (signatureBase64).
QByteArray authorizationHeader(QByteArrayView mchid, QByteArrayView serialNo, qint64 timestamp, QByteArrayView nonce,
                               QByteArrayView signatureBase64);

/// Signs the request message with the merchant key and returns the Authorization value.
core::Result<QByteArray> signRequest(const crypto::PrivateKey &merchantKey, QByteArrayView mchid,
                                     QByteArrayView serialNo, QByteArrayView method, QByteArrayView urlPathAndQuery,
                                     qint64 timestamp, QByteArrayView nonce, QByteArrayView body);

/// The parts of an Authorization header (the platform's view; used by the simulator).
struct Authorization {
    QByteArray mchid, nonce, signature, timestamp, serialNo;
};
/// Parses `WECHATPAY2-SHA256-RSA2048 k="v",...` (any order). InvalidInput when the scheme
/// is different or a field is missing.
core::Result<Authorization> parseAuthorization(QByteArrayView header);

/// The signature headers of one response or notification.
struct SignedHeaders {
    QByteArray timestamp, nonce, signature, serial;
};

/// BadSignature unless `timestamp` (Wechatpay-Timestamp, seconds) is a number at most
/// `windowSeconds` away from nowSeconds: the replay window of a signed message.
core::Result<void> checkTimestampWindow(const QByteArray &timestamp, qint64 nowSeconds,
                                        qint64 windowSeconds = kDefaultTimestampWindowSeconds);

/// Trusted platform public keys by serial (several at once: platforms rotate keys, and an
/// agent started with sim.enabled trusts the simulator's besides the real ones).
/// verify(): BadSignature when a header is missing, the serial is unknown, the timestamp
/// is not a number or is more than window seconds away from nowSeconds, or the signature
/// does not verify over the exact body bytes. The message names which check failed.
class PlatformVerifier {
public:
    void addKey(const QString &serial, const crypto::PublicKey &key);
    bool isEmpty() const { return m_keys.isEmpty(); }
    QStringList serials() const { return m_keys.keys(); }

    core::Result<void> verify(const SignedHeaders &headers, QByteArrayView body, qint64 nowSeconds,
                              qint64 windowSeconds = kDefaultTimestampWindowSeconds) const;

private:
    QHash<QString, crypto::PublicKey> m_keys;
};

// ---- Notifications (payments and refunds) ------------------------------------------

/// What the envelope (the signed JSON body) carries. Parsing it comes before the
/// signature check only so that a body which is not the platform's shape (truncated, not
/// JSON) is InvalidInput as the port says; nothing here is trusted until verified.
struct Envelope {
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
core::Result<Envelope> parseEnvelope(QByteArrayView body);

/// The Wechatpay-* headers of a delivery (case-insensitive names; missing ones empty).
SignedHeaders signedHeaders(const core::RawDelivery &delivery);

/// Checks the envelope's content: event_type TRANSACTION.SUCCESS and algorithm
/// AEAD_AES_256_GCM, else InvalidInput.
core::Result<void> checkEnvelope(const Envelope &envelope);

/// Decrypts resource.ciphertext under the APIv3 key with the envelope's nonce and
/// associated_data. BadSignature for any authentication failure (tampered ciphertext,
/// wrong associated data or nonce, wrong key, malformed base64).
core::Result<QByteArray> decryptResource(QByteArrayView apiv3Key, const Envelope &envelope);

/// Parses the decrypted transaction object into a notification (channel WeChat, eventId
/// from the envelope). InvalidInput when it is not a JSON object, transaction_id or
/// out_trade_no is outside [A-Za-z0-9_-]{1,64}, amount.total is not a positive whole
/// number, mchid, appid or trade_state is missing, or amount.currency is not three capital
/// letters. paid = trade_state == "SUCCESS". mchid/appid are returned, never compared.
core::Result<core::PaymentNotification> parseTransaction(QByteArrayView plaintext, const QString &eventId);

/// The refund notification's content: event_type REFUND.SUCCESS, REFUND.ABNORMAL or
/// REFUND.CLOSED and algorithm AEAD_AES_256_GCM, else InvalidInput (a payment's
/// TRANSACTION.SUCCESS included).
core::Result<void> checkRefundEnvelope(const Envelope &envelope);

/// Parses the decrypted refund object (associated data "refund") into a refund
/// notification (channel WeChat, eventId from the envelope). InvalidInput when it is not
/// a JSON object; out_refund_no, refund_id, out_trade_no or transaction_id is outside
/// [A-Za-z0-9_-]{1,64}; mchid is missing; refund_status is not SUCCESS, CLOSED or
/// ABNORMAL, or not the one eventType names (REFUND.SUCCESS carries SUCCESS, …);
/// amount.refund or amount.total is not a positive whole number, or refund > total.
core::Result<core::RefundNotification> parseRefund(QByteArrayView plaintext, const QString &eventId,
                                                   const QString &eventType);

} // namespace wechat
} // namespace payonce::platform
