#include "alipaysignature.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace payonce::gateway::alipay {

using core::Error;
using core::ErrorCode;

QByteArray signContent(const Params &params, SignContentKind kind)
{
    Params kept;
    for (const auto &p : params) {
        if (p.first == "sign" || p.first.isEmpty())
            continue;
        // A notification's text keeps empty values (Alipay's own verifiers do); a request's
        // leaves them out.
        if (kind == SignContentKind::Notification ? p.first == "sign_type" : p.second.isEmpty())
            continue;
        kept.append(p);
    }
    std::sort(kept.begin(), kept.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    QByteArray content;
    for (const auto &p : std::as_const(kept)) {
        if (!content.isEmpty())
            content.append('&');
        content.append(p.first).append('=').append(p.second);
    }
    return content;
}

core::Result<QByteArray> signParams(const crypto::PrivateKey &key, const Params &params, SignContentKind kind)
{
    return key.signBase64(signContent(params, kind));
}

bool verifyParams(const crypto::PublicKey &key, const Params &params, SignContentKind kind)
{
    for (const auto &p : params) {
        if (p.first == "sign")
            return key.verifyBase64(signContent(params, kind), p.second);
    }
    return false;
}

QByteArray responseKey(QByteArrayView method)
{
    QByteArray key = method.toByteArray();
    key.replace('.', '_');
    return key + "_response";
}

namespace {

// Index just past the JSON string starting at pos (json[pos] == '"'), or -1.
qsizetype skipString(QByteArrayView json, qsizetype pos)
{
    for (qsizetype i = pos + 1; i < json.size(); ++i) {
        if (json[i] == '\\')
            ++i;
        else if (json[i] == '"')
            return i + 1;
    }
    return -1;
}

// Index just past the JSON value starting at pos (after whitespace), or -1.
qsizetype skipValue(QByteArrayView json, qsizetype pos)
{
    if (pos >= json.size())
        return -1;
    const char c = json[pos];
    if (c == '"')
        return skipString(json, pos);
    if (c == '{' || c == '[') {
        int depth = 0;
        for (qsizetype i = pos; i < json.size(); ++i) {
            const char d = json[i];
            if (d == '"') {
                i = skipString(json, i);
                if (i < 0)
                    return -1;
                --i;
            } else if (d == '{' || d == '[') {
                ++depth;
            } else if (d == '}' || d == ']') {
                if (--depth == 0)
                    return i + 1;
            }
        }
        return -1;
    }
    qsizetype i = pos; // number, true, false, null
    while (i < json.size() && json[i] != ',' && json[i] != '}' && json[i] != ']' && json[i] != ' ' && json[i] != '\n'
           && json[i] != '\r' && json[i] != '\t')
        ++i;
    return i > pos ? i : -1;
}

qsizetype skipSpace(QByteArrayView json, qsizetype pos)
{
    while (pos < json.size() && (json[pos] == ' ' || json[pos] == '\n' || json[pos] == '\r' || json[pos] == '\t'))
        ++pos;
    return pos;
}

} // namespace

std::optional<QByteArray> rawMember(QByteArrayView json, QByteArrayView key)
{
    qsizetype pos = skipSpace(json, 0);
    if (pos >= json.size() || json[pos] != '{')
        return std::nullopt;
    pos = skipSpace(json, pos + 1);
    while (pos < json.size() && json[pos] == '"') {
        const qsizetype keyEnd = skipString(json, pos);
        if (keyEnd < 0)
            return std::nullopt;
        const QByteArrayView name = json.sliced(pos + 1, keyEnd - pos - 2);
        pos = skipSpace(json, keyEnd);
        if (pos >= json.size() || json[pos] != ':')
            return std::nullopt;
        pos = skipSpace(json, pos + 1);
        const qsizetype valueEnd = skipValue(json, pos);
        if (valueEnd < 0)
            return std::nullopt;
        if (name == key)
            return json.sliced(pos, valueEnd - pos).toByteArray();
        pos = skipSpace(json, valueEnd);
        if (pos < json.size() && json[pos] == ',')
            pos = skipSpace(json, pos + 1);
    }
    return std::nullopt;
}

core::Result<QByteArray> verifiedResponse(const crypto::PublicKey &alipayKey, QByteArrayView body,
                                          QByteArrayView method)
{
    const QByteArray key = responseKey(method);
    auto raw = rawMember(body, key);
    if (!raw || !raw->startsWith('{'))
        return Error::make(ErrorCode::BadSignature,
                           QStringLiteral("Alipay response has no \"%1\" object").arg(QString::fromLatin1(key)));
    const QJsonObject top = QJsonDocument::fromJson(body.toByteArray()).object();
    const QByteArray sign = top.value(QLatin1String("sign")).toString().toLatin1();
    if (sign.isEmpty())
        return Error::make(ErrorCode::BadSignature, QStringLiteral("Alipay response is not signed"));
    if (!alipayKey.verifyBase64(*raw, sign))
        return Error::make(ErrorCode::BadSignature, QStringLiteral("Alipay response signature does not verify"));
    return *raw;
}

QByteArray frameResponse(QByteArrayView method, QByteArrayView responseObjectJson, QByteArrayView signatureBase64)
{
    QByteArray out;
    out.append("{\"")
        .append(responseKey(method))
        .append("\":")
        .append(responseObjectJson)
        .append(",\"sign\":\"")
        .append(signatureBase64)
        .append("\"}");
    return out;
}

} // namespace payonce::gateway::alipay
