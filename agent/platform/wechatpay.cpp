#include "wechatpay.h"

#include "notificationformat.h"

#include "crypto/aesgcm.h"
#include "shared/money.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace payonce::platform::wechat {

using core::Error;
using core::ErrorCode;
using core::PaymentNotification;
using detail::badSignature;
using detail::invalid;
using detail::isCurrencyCode;
using detail::stringMember;

using core::Error;
using core::ErrorCode;

QByteArray requestMessage(QByteArrayView method, QByteArrayView urlPathAndQuery, qint64 timestamp, QByteArrayView nonce,
                          QByteArrayView body)
{
    QByteArray m;
    m.reserve(method.size() + urlPathAndQuery.size() + nonce.size() + body.size() + 32);
    m.append(method)
        .append('\n')
        .append(urlPathAndQuery)
        .append('\n')
        .append(QByteArray::number(timestamp))
        .append('\n')
        .append(nonce)
        .append('\n')
        .append(body)
        .append('\n');
    return m;
}

QByteArray responseMessage(QByteArrayView timestamp, QByteArrayView nonce, QByteArrayView body)
{
    QByteArray m;
    m.reserve(timestamp.size() + nonce.size() + body.size() + 3);
    m.append(timestamp).append('\n').append(nonce).append('\n').append(body).append('\n');
    return m;
}

QByteArray authorizationHeader(QByteArrayView mchid, QByteArrayView serialNo, qint64 timestamp, QByteArrayView nonce,
                               QByteArrayView signatureBase64)
{
    QByteArray h;
    h.append(kAuthScheme)
        .append(" mchid=\"")
        .append(mchid)
        .append("\",nonce_str=\"")
        .append(nonce)
        .append("\",signature=\"")
        .append(signatureBase64)
        .append("\",timestamp=\"")
        .append(QByteArray::number(timestamp))
        .append("\",serial_no=\"")
        .append(serialNo)
        .append('"');
    return h;
}

core::Result<QByteArray> signRequest(const crypto::PrivateKey &merchantKey, QByteArrayView mchid,
                                     QByteArrayView serialNo, QByteArrayView method, QByteArrayView urlPathAndQuery,
                                     qint64 timestamp, QByteArrayView nonce, QByteArrayView body)
{
    auto signature = merchantKey.signBase64(requestMessage(method, urlPathAndQuery, timestamp, nonce, body));
    if (!signature)
        return signature.error();
    return authorizationHeader(mchid, serialNo, timestamp, nonce, *signature);
}

core::Result<Authorization> parseAuthorization(QByteArrayView header)
{
    const QByteArray text = header.toByteArray().trimmed();
    if (!text.startsWith(kAuthScheme) || text.size() <= kAuthScheme.size() || text.at(kAuthScheme.size()) != ' ')
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("Authorization: not the WECHATPAY2-SHA256-RSA2048 scheme"));
    Authorization a;
    QByteArray rest = text.mid(kAuthScheme.size() + 1);
    // k="v" pairs separated by commas; values never contain '"' (base64, digits, hex).
    qsizetype pos = 0;
    while (pos < rest.size()) {
        while (pos < rest.size() && (rest.at(pos) == ',' || rest.at(pos) == ' '))
            ++pos;
        if (pos >= rest.size())
            break;
        const qsizetype eq = rest.indexOf("=\"", pos);
        if (eq < 0)
            return Error::make(ErrorCode::InvalidInput, QStringLiteral("Authorization: malformed field"));
        const qsizetype close = rest.indexOf('"', eq + 2);
        if (close < 0)
            return Error::make(ErrorCode::InvalidInput, QStringLiteral("Authorization: unterminated value"));
        const QByteArray key = rest.mid(pos, eq - pos).trimmed();
        const QByteArray value = rest.mid(eq + 2, close - eq - 2);
        if (key == "mchid")
            a.mchid = value;
        else if (key == "nonce_str")
            a.nonce = value;
        else if (key == "signature")
            a.signature = value;
        else if (key == "timestamp")
            a.timestamp = value;
        else if (key == "serial_no")
            a.serialNo = value;
        pos = close + 1;
    }
    if (a.mchid.isEmpty() || a.nonce.isEmpty() || a.signature.isEmpty() || a.timestamp.isEmpty()
        || a.serialNo.isEmpty())
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("Authorization: a field is missing"));
    return a;
}

void PlatformVerifier::addKey(const QString &serial, const crypto::PublicKey &key)
{
    m_keys.insert(serial, key);
}

core::Result<void> checkTimestampWindow(const QByteArray &timestampText, qint64 nowSeconds, qint64 windowSeconds)
{
    bool numeric = false;
    const qint64 timestamp = timestampText.toLongLong(&numeric);
    if (!numeric)
        return Error::make(ErrorCode::BadSignature, QStringLiteral("Wechatpay-Timestamp is not a number"));
    if (timestamp < nowSeconds - windowSeconds || timestamp > nowSeconds + windowSeconds)
        return Error::make(ErrorCode::BadSignature,
                           QStringLiteral("Wechatpay-Timestamp %1 is more than %2 s from now (%3)")
                               .arg(timestamp)
                               .arg(windowSeconds)
                               .arg(nowSeconds));
    return {};
}

core::Result<void> PlatformVerifier::verify(const SignedHeaders &headers, QByteArrayView body, qint64 nowSeconds,
                                            qint64 windowSeconds) const
{
    if (headers.signature.isEmpty() || headers.timestamp.isEmpty() || headers.nonce.isEmpty()
        || headers.serial.isEmpty())
        return Error::make(ErrorCode::BadSignature,
                           QStringLiteral("response carries no complete Wechatpay-* signature headers"));
    const auto it = m_keys.constFind(QString::fromLatin1(headers.serial));
    if (it == m_keys.constEnd())
        return Error::make(
            ErrorCode::BadSignature,
            QStringLiteral("unknown platform key serial \"%1\"").arg(QString::fromLatin1(headers.serial.left(64))));
    if (auto inWindow = checkTimestampWindow(headers.timestamp, nowSeconds, windowSeconds); !inWindow)
        return inWindow;
    if (!it->verifyBase64(responseMessage(headers.timestamp, headers.nonce, body), headers.signature))
        return Error::make(
            ErrorCode::BadSignature,
            QStringLiteral("Wechatpay-Signature does not verify with platform key \"%1\"").arg(it.key()));
    return {};
}

// ---- Notifications -------------------------------------------------------------------

core::Result<Envelope> parseEnvelope(QByteArrayView body)
{
    if (body.size() > kMaxNotificationBodyBytes)
        return invalid(QStringLiteral("notification body of %1 bytes is over the %2-byte limit")
                           .arg(body.size())
                           .arg(kMaxNotificationBodyBytes));
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(body.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return invalid(QStringLiteral("WeChat notification body is not a JSON object"));
    const QJsonObject top = doc.object();
    const auto id = stringMember(top, QLatin1StringView("id"));
    const auto eventType = stringMember(top, QLatin1StringView("event_type"));
    if (!id || id->isEmpty() || !eventType)
        return invalid(QStringLiteral("WeChat notification lacks id or event_type"));
    const QJsonValue resourceValue = top.value(QLatin1StringView("resource"));
    if (!resourceValue.isObject())
        return invalid(QStringLiteral("WeChat notification lacks a resource object"));
    const QJsonObject resource = resourceValue.toObject();
    const auto algorithm = stringMember(resource, QLatin1StringView("algorithm"));
    const auto ciphertext = stringMember(resource, QLatin1StringView("ciphertext"));
    const auto nonce = stringMember(resource, QLatin1StringView("nonce"));
    const QJsonValue ad = resource.value(QLatin1StringView("associated_data"));
    if (!algorithm || !ciphertext || ciphertext->isEmpty() || !nonce || nonce->isEmpty()
        || !(ad.isString() || ad.isUndefined() || ad.isNull()))
        return invalid(QStringLiteral("WeChat notification resource lacks algorithm, ciphertext or nonce"));
    Envelope e;
    e.id = *id;
    e.eventType = *eventType;
    e.algorithm = algorithm->toUtf8();
    e.ciphertext = ciphertext->toUtf8();
    e.associatedData = ad.toString().toUtf8();
    e.nonce = nonce->toUtf8();
    return e;
}

SignedHeaders signedHeaders(const core::RawDelivery &delivery)
{
    return {delivery.header("Wechatpay-Timestamp"), delivery.header("Wechatpay-Nonce"),
            delivery.header("Wechatpay-Signature"), delivery.header("Wechatpay-Serial")};
}

core::Result<void> checkEnvelope(const Envelope &envelope)
{
    if (envelope.eventType != QLatin1StringView("TRANSACTION.SUCCESS"))
        return invalid(QStringLiteral("WeChat notification event_type \"%1\" is not TRANSACTION.SUCCESS")
                           .arg(envelope.eventType.left(64)));
    if (envelope.algorithm != "AEAD_AES_256_GCM")
        return invalid(QStringLiteral("WeChat notification resource algorithm is not AEAD_AES_256_GCM"));
    return {};
}

core::Result<QByteArray> decryptResource(QByteArrayView apiv3Key, const Envelope &envelope)
{
    auto plain = crypto::aes256GcmDecrypt(apiv3Key, envelope.nonce, envelope.associatedData, envelope.ciphertext);
    if (!plain) {
        // A key of the wrong length is our misconfiguration, refused when the verifier is
        // built; here every failure is about the delivery: it does not authenticate.
        return badSignature(QStringLiteral("WeChat notification resource does not decrypt: ")
                            + plain.error().internalMessage);
    }
    return *plain;
}

core::Result<PaymentNotification> parseTransaction(QByteArrayView plaintext, const QString &eventId)
{
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(plaintext.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return invalid(QStringLiteral("WeChat transaction resource is not a JSON object"));
    const QJsonObject o = doc.object();
    const auto transactionId = stringMember(o, QLatin1StringView("transaction_id"));
    const auto outTradeNo = stringMember(o, QLatin1StringView("out_trade_no"));
    if (!transactionId || !isValidTradeNo(*transactionId))
        return invalid(QStringLiteral("WeChat transaction_id is not 1-64 of [A-Za-z0-9_-]"));
    if (!outTradeNo || !isValidTradeNo(*outTradeNo))
        return invalid(QStringLiteral("WeChat out_trade_no is not 1-64 of [A-Za-z0-9_-]"));
    const auto mchid = stringMember(o, QLatin1StringView("mchid"));
    const auto appid = stringMember(o, QLatin1StringView("appid"));
    const auto tradeState = stringMember(o, QLatin1StringView("trade_state"));
    if (!mchid || mchid->isEmpty() || !appid || appid->isEmpty() || !tradeState || tradeState->isEmpty())
        return invalid(QStringLiteral("WeChat transaction lacks mchid, appid or trade_state"));
    const QJsonValue amountValue = o.value(QLatin1StringView("amount"));
    if (!amountValue.isObject())
        return invalid(QStringLiteral("WeChat transaction lacks amount"));
    const QJsonObject amount = amountValue.toObject();
    const QJsonValue total = amount.value(QLatin1StringView("total"));
    // A JSON number is held as a whole qint64 or a double; toInteger() refuses anything
    // that is not a whole number in range. Fen never pass through a double here.
    const qint64 totalFen = total.isDouble() ? total.toInteger(-1) : -1;
    if (totalFen <= 0)
        return invalid(QStringLiteral("WeChat amount.total is not a positive whole number of fen"));
    const auto currency = stringMember(amount, QLatin1StringView("currency"));
    if (!currency || !isCurrencyCode(*currency))
        return invalid(QStringLiteral("WeChat amount.currency is not a currency code"));

    PaymentNotification n;
    n.channel = core::Channel::WeChat;
    n.payNo = *transactionId;
    n.paymentNo = *outTradeNo;
    n.amountFen = totalFen;
    n.currency = *currency;
    n.merchantId = *mchid;
    n.appId = *appid;
    n.tradeState = *tradeState;
    n.paid = *tradeState == QLatin1StringView("SUCCESS");
    n.eventId = eventId;
    return n;
}

core::Result<void> checkRefundEnvelope(const Envelope &envelope)
{
    if (envelope.eventType != QLatin1StringView("REFUND.SUCCESS")
        && envelope.eventType != QLatin1StringView("REFUND.ABNORMAL")
        && envelope.eventType != QLatin1StringView("REFUND.CLOSED"))
        return invalid(
            QStringLiteral("WeChat notification event_type \"%1\" is not a refund's").arg(envelope.eventType.left(64)));
    if (envelope.algorithm != "AEAD_AES_256_GCM")
        return invalid(QStringLiteral("WeChat notification resource algorithm is not AEAD_AES_256_GCM"));
    return {};
}

core::Result<core::RefundNotification> parseRefund(QByteArrayView plaintext, const QString &eventId,
                                                   const QString &eventType)
{
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(plaintext.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return invalid(QStringLiteral("WeChat refund resource is not a JSON object"));
    const QJsonObject o = doc.object();
    const auto id = [&o](const char *name) -> std::optional<QString> {
        const auto value = stringMember(o, QLatin1StringView(name));
        if (!value || !isValidTradeNo(*value))
            return std::nullopt;
        return value;
    };
    const auto outRefundNo = id("out_refund_no");
    const auto refundId = id("refund_id");
    const auto outTradeNo = id("out_trade_no");
    const auto transactionId = id("transaction_id");
    if (!outRefundNo || !refundId || !outTradeNo || !transactionId)
        return invalid(QStringLiteral(
            "WeChat refund: out_refund_no, refund_id, out_trade_no or transaction_id is not 1-64 of [A-Za-z0-9_-]"));
    const auto mchid = stringMember(o, QLatin1StringView("mchid"));
    if (!mchid || mchid->isEmpty())
        return invalid(QStringLiteral("WeChat refund lacks mchid"));
    const QString status = stringMember(o, QLatin1StringView("refund_status")).value_or(QString());
    core::RefundNotification n;
    if (status == QLatin1StringView("SUCCESS"))
        n.state = core::RefundNotification::State::Success;
    else if (status == QLatin1StringView("CLOSED"))
        n.state = core::RefundNotification::State::Closed;
    else if (status == QLatin1StringView("ABNORMAL"))
        n.state = core::RefundNotification::State::Abnormal;
    else
        return invalid(
            QStringLiteral("WeChat refund_status \"%1\" is not SUCCESS, CLOSED or ABNORMAL").arg(status.left(32)));
    if (eventType != QStringLiteral("REFUND.") + status)
        return invalid(
            QStringLiteral("WeChat refund_status %1 contradicts event_type %2").arg(status, eventType.left(64)));
    const QJsonObject amount = o.value(QLatin1StringView("amount")).toObject();
    // Whole fen only: toInteger() refuses fractions and out-of-range numbers.
    const QJsonValue refundValue = amount.value(QLatin1StringView("refund"));
    const QJsonValue totalValue = amount.value(QLatin1StringView("total"));
    const qint64 refundFen = refundValue.isDouble() ? refundValue.toInteger(-1) : -1;
    const qint64 totalFen = totalValue.isDouble() ? totalValue.toInteger(-1) : -1;
    if (refundFen <= 0 || totalFen <= 0 || refundFen > totalFen)
        return invalid(
            QStringLiteral("WeChat refund amount.refund and amount.total must be positive whole fen, refund <= total"));

    n.channel = core::Channel::WeChat;
    n.refundNo = *outRefundNo;
    n.refundId = *refundId;
    n.paymentNo = *outTradeNo;
    n.payNo = *transactionId;
    n.amountFen = refundFen;
    n.totalFen = totalFen;
    n.refundStatus = status;
    n.merchantId = *mchid;
    n.eventId = eventId;
    return n;
}

} // namespace payonce::platform::wechat
