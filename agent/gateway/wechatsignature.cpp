#include "wechatsignature.h"

namespace payonce::gateway::wechat {

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

} // namespace payonce::gateway::wechat
