#pragma once

#include "core/common/result.h"
#include "crypto/rsakeys.h"
#include "platform/alipay.h"
#include "platform/wechatpay.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

/// The platform's side of a payment notification: what WeChat Pay and Alipay do before
/// they POST to a merchant's notify URL. The simulator's notifier and the tests build
/// notifications with these; the agent verifies them with payonce_callbacks, which uses
/// the same message layouts (wechat::responseMessage, alipay::signContent) and nothing
/// else of this file. All functions are pure and thread-safe.
namespace payonce::platform {

namespace wechat {

/// The decrypted `resource` of a WeChat Pay v3 TRANSACTION.SUCCESS notification (the
/// "transaction" object). Serialised by transactionJson() with every field the platform
/// sends; empty strings are written as they are.
struct TransactionFields {
    QString mchid;
    QString appid;
    QString outTradeNo;    ///< our payment number (PaymentRecord::paymentNo)
    QString transactionId; ///< the platform's pay_no
    QString tradeType = QStringLiteral("NATIVE");
    QString tradeState = QStringLiteral("SUCCESS");
    QString tradeStateDesc = QStringLiteral("\u652f\u4ed8\u6210\u529f"); // 支付成功
    QString bankType = QStringLiteral("OTHERS");
    QString attach;
    QString successTime; ///< RFC 3339 with offset, "2026-11-29T19:45:33+08:00"
    QString openid;
    qint64 totalFen = 0;
    qint64 payerTotalFen = -1; ///< -1: same as totalFen
    QString currency = QStringLiteral("CNY");
};

/// Compact JSON of the transaction object (the plaintext that encryptResource() seals).
QByteArray transactionJson(const TransactionFields &fields);

/// The `resource` member of a notification body.
struct EncryptedResource {
    QByteArray algorithm = "AEAD_AES_256_GCM";
    QByteArray ciphertext;     ///< base64(ciphertext || 16-byte tag)
    QByteArray associatedData; ///< "transaction" for payments
    QByteArray nonce;          ///< 12 ASCII characters, fresh per encryption
    QByteArray originalType = "transaction";
};

/// Seals plaintext with AES-256-GCM under the merchant's APIv3 key (its 32 ASCII bytes).
/// InvalidInput when the key is not 32 bytes or the nonce is empty.
core::Result<EncryptedResource> encryptResource(QByteArrayView apiv3Key, QByteArrayView plaintext,
                                                QByteArrayView associatedData, QByteArrayView nonce);

/// The notification envelope, compact JSON, members in the platform's order:
/// {"id","create_time","resource_type":"encrypt-resource","event_type","summary","resource":{...}}.
QByteArray notificationBody(QByteArrayView id, QByteArrayView createTime, QByteArrayView eventType,
                            QByteArrayView summary, const EncryptedResource &resource);

/// Signs a notification body with the platform key: SHA256withRSA over
/// "timestamp\nnonce\nbody\n" (responseMessage()). Returns the four header values;
/// SignedHeaders::serial is the serial given.
core::Result<SignedHeaders> signNotification(const crypto::PrivateKey &platformKey, QByteArrayView serial,
                                             qint64 timestamp, QByteArrayView nonce, QByteArrayView body);

/// The headers as an HTTP client sends them: Wechatpay-Signature, -Timestamp, -Nonce,
/// -Serial, and Content-Type: application/json.
QList<QPair<QByteArray, QByteArray>> notificationHeaders(const SignedHeaders &headers);

} // namespace wechat

namespace alipay {

/// application/x-www-form-urlencoded of params in the given order: names and values
/// percent-encoded (RFC 3986 unreserved characters kept, space as %20).
QByteArray encodeForm(const Params &params);

/// Signs an asynchronous notification as Alipay does and returns the form body to POST:
/// sets sign_type=RSA2 (replacing any), signs signContent(params, Notification) — the
/// sorted raw k=v pairs without sign, sign_type and empty values — with the Alipay
/// (platform) private key, appends sign, and form-encodes everything.
/// The caller supplies the business fields: notify_id, notify_time, notify_type
/// ("trade_status_sync"), app_id, seller_id, trade_no, out_trade_no, trade_status,
/// total_amount ("99.00", formatAmountFen), gmt_payment, charset ("utf-8"), version.
core::Result<QByteArray> signNotifyForm(const crypto::PrivateKey &alipayKey, Params params);

} // namespace alipay

} // namespace payonce::platform
