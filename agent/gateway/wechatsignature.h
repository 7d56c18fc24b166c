#pragma once

#include "core/common/result.h"
#include "crypto/rsakeys.h"

#include <QByteArray>
#include <QHash>
#include <QString>

namespace payonce::gateway {

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

} // namespace wechat
} // namespace payonce::gateway
