#include "notificationsigning.h"

#include "crypto/aesgcm.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::platform {

namespace wechat {

QByteArray transactionJson(const TransactionFields &f)
{
    QJsonObject amount{{QStringLiteral("total"), f.totalFen},
                       {QStringLiteral("payer_total"), f.payerTotalFen < 0 ? f.totalFen : f.payerTotalFen},
                       {QStringLiteral("currency"), f.currency},
                       {QStringLiteral("payer_currency"), f.currency}};
    QJsonObject o{{QStringLiteral("mchid"), f.mchid},
                  {QStringLiteral("appid"), f.appid},
                  {QStringLiteral("out_trade_no"), f.outTradeNo},
                  {QStringLiteral("transaction_id"), f.transactionId},
                  {QStringLiteral("trade_type"), f.tradeType},
                  {QStringLiteral("trade_state"), f.tradeState},
                  {QStringLiteral("trade_state_desc"), f.tradeStateDesc},
                  {QStringLiteral("bank_type"), f.bankType},
                  {QStringLiteral("attach"), f.attach},
                  {QStringLiteral("success_time"), f.successTime},
                  {QStringLiteral("payer"), QJsonObject{{QStringLiteral("openid"), f.openid}}},
                  {QStringLiteral("amount"), amount}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

core::Result<EncryptedResource> encryptResource(QByteArrayView apiv3Key, QByteArrayView plaintext,
                                                QByteArrayView associatedData, QByteArrayView nonce)
{
    auto sealed = crypto::aes256GcmEncrypt(apiv3Key, nonce, associatedData, plaintext);
    if (!sealed)
        return sealed.error();
    EncryptedResource r;
    r.ciphertext = *sealed;
    r.associatedData = associatedData.toByteArray();
    r.nonce = nonce.toByteArray();
    return r;
}

QByteArray notificationBody(QByteArrayView id, QByteArrayView createTime, QByteArrayView eventType,
                            QByteArrayView summary, const EncryptedResource &resource)
{
    // Built by hand, not by QJsonObject (which sorts members): the platform's order, so a
    // body from the simulator reads like a real one. Every value is escaped.
    const auto str = [](QByteArrayView v) {
        return QJsonDocument(QJsonObject{{QStringLiteral("v"), QString::fromUtf8(v)}})
            .toJson(QJsonDocument::Compact)
            .mid(5)
            .chopped(1); // {"v":"..."} → "..."
    };
    QByteArray b;
    b.append("{\"id\":")
        .append(str(id))
        .append(",\"create_time\":")
        .append(str(createTime))
        .append(",\"resource_type\":\"encrypt-resource\",\"event_type\":")
        .append(str(eventType))
        .append(",\"summary\":")
        .append(str(summary))
        .append(",\"resource\":{\"original_type\":")
        .append(str(resource.originalType))
        .append(",\"algorithm\":")
        .append(str(resource.algorithm))
        .append(",\"ciphertext\":")
        .append(str(resource.ciphertext))
        .append(",\"associated_data\":")
        .append(str(resource.associatedData))
        .append(",\"nonce\":")
        .append(str(resource.nonce))
        .append("}}");
    return b;
}

core::Result<SignedHeaders> signNotification(const crypto::PrivateKey &platformKey, QByteArrayView serial,
                                             qint64 timestamp, QByteArrayView nonce, QByteArrayView body)
{
    const QByteArray ts = QByteArray::number(timestamp);
    auto signature = platformKey.signBase64(responseMessage(ts, nonce, body));
    if (!signature)
        return signature.error();
    return SignedHeaders{ts, nonce.toByteArray(), *signature, serial.toByteArray()};
}

QList<QPair<QByteArray, QByteArray>> notificationHeaders(const SignedHeaders &h)
{
    return {{"Wechatpay-Signature", h.signature},
            {"Wechatpay-Timestamp", h.timestamp},
            {"Wechatpay-Nonce", h.nonce},
            {"Wechatpay-Serial", h.serial},
            {"Content-Type", "application/json"}};
}

} // namespace wechat

namespace alipay {

QByteArray encodeForm(const Params &params)
{
    QByteArray out;
    for (const auto &[name, value] : params) {
        if (!out.isEmpty())
            out.append('&');
        out.append(name.toPercentEncoding()).append('=').append(value.toPercentEncoding());
    }
    return out;
}

core::Result<QByteArray> signNotifyForm(const crypto::PrivateKey &alipayKey, Params params)
{
    params.removeIf([](const auto &p) { return p.first == "sign" || p.first == "sign_type"; });
    params.append(qMakePair(QByteArray("sign_type"), QByteArray("RSA2")));
    auto signature = signParams(alipayKey, params, SignContentKind::Notification);
    if (!signature)
        return signature.error();
    params.append(qMakePair(QByteArray("sign"), *signature));
    return encodeForm(params);
}

} // namespace alipay

} // namespace payonce::platform
