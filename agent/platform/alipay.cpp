#include "alipay.h"

#include "notificationformat.h"

#include "shared/money.h"

#include <QSet>

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace payonce::platform::alipay {

using core::Error;
using core::ErrorCode;
using core::PaymentNotification;
using detail::badSignature;
using detail::invalid;

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

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::optional<QByteArray> formDecode(QByteArrayView text)
{
    QByteArray out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '+') {
            out.append(' ');
        } else if (c == '%') {
            if (i + 2 >= text.size())
                return std::nullopt;
            const int hi = hexValue(text[i + 1]);
            const int lo = hexValue(text[i + 2]);
            if (hi < 0 || lo < 0)
                return std::nullopt;
            out.append(static_cast<char>(hi * 16 + lo));
            i += 2;
        } else {
            out.append(c);
        }
    }
    return out;
}

QByteArray paramValue(const Params &params, QByteArrayView name)
{
    for (const auto &[key, value] : params) {
        if (key == name)
            return value;
    }
    return {};
}

bool hasParam(const Params &params, QByteArrayView name)
{
    for (const auto &p : params) {
        if (p.first == name)
            return true;
    }
    return false;
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

// ---- Notifications -------------------------------------------------------------------

core::Result<Params> parseForm(QByteArrayView body)
{
    if (body.size() > kMaxNotificationBodyBytes)
        return invalid(QStringLiteral("notification body of %1 bytes is over the %2-byte limit")
                           .arg(body.size())
                           .arg(kMaxNotificationBodyBytes));
    if (body.isEmpty())
        return invalid(QStringLiteral("Alipay notification body is empty"));
    Params params;
    QSet<QByteArray> seen;
    qsizetype pos = 0;
    while (pos <= body.size()) {
        qsizetype end = body.indexOf('&', pos);
        if (end < 0)
            end = body.size();
        const QByteArrayView pair = body.sliced(pos, end - pos);
        const qsizetype eq = pair.indexOf('=');
        if (eq <= 0)
            return invalid(QStringLiteral("Alipay notification is not a form: a pair without a name or '='"));
        auto name = formDecode(pair.first(eq));
        auto value = formDecode(pair.sliced(eq + 1));
        if (!name || !value || name->isEmpty())
            return invalid(QStringLiteral("Alipay notification is not a form: bad percent-encoding"));
        if (seen.contains(*name))
            return invalid(QStringLiteral("Alipay notification repeats a parameter"));
        seen.insert(*name);
        params.append({*name, *value});
        pos = end + 1;
    }
    return params;
}

core::Result<void> verifySignature(const crypto::PublicKey &alipayKey, const Params &params)
{
    if (!hasParam(params, "sign") || paramValue(params, "sign").isEmpty())
        return badSignature(QStringLiteral("Alipay notification is not signed"));
    if (hasParam(params, "sign_type") && paramValue(params, "sign_type") != "RSA2")
        return badSignature(QStringLiteral("Alipay notification sign_type is not RSA2"));
    if (!verifyParams(alipayKey, params, SignContentKind::Notification))
        return badSignature(QStringLiteral("Alipay notification signature does not verify"));
    return {};
}

core::Result<PaymentNotification> parseNotify(const Params &params)
{
    const auto field = [&params](QByteArrayView name) { return QString::fromUtf8(paramValue(params, name)); };
    const QString notifyId = field("notify_id");
    const QString tradeNo = field("trade_no");
    const QString outTradeNo = field("out_trade_no");
    const QString tradeStatus = field("trade_status");
    const QString sellerId = field("seller_id");
    const QString appId = field("app_id");
    if (notifyId.isEmpty() || tradeStatus.isEmpty() || sellerId.isEmpty() || appId.isEmpty())
        return invalid(QStringLiteral("Alipay notification lacks notify_id, trade_status, seller_id or app_id"));
    if (!isValidTradeNo(tradeNo))
        return invalid(QStringLiteral("Alipay trade_no is not 1-64 of [A-Za-z0-9_-]"));
    if (!isValidTradeNo(outTradeNo))
        return invalid(QStringLiteral("Alipay out_trade_no is not 1-64 of [A-Za-z0-9_-]"));
    const auto fen = parseAmountFen(field("total_amount"));
    if (!fen)
        return invalid(QStringLiteral("Alipay total_amount is not a positive yuan amount with at most two places"));

    PaymentNotification n;
    n.channel = core::Channel::Alipay;
    n.payNo = tradeNo;
    n.paymentNo = outTradeNo;
    n.amountFen = *fen;
    n.currency = QStringLiteral("CNY");
    n.merchantId = sellerId;
    n.appId = appId;
    n.tradeState = tradeStatus;
    n.paid = tradeStatus == QLatin1StringView("TRADE_SUCCESS") || tradeStatus == QLatin1StringView("TRADE_FINISHED");
    n.eventId = notifyId;
    return n;
}

bool isRefundNotify(const Params &params)
{
    return !paramValue(params, "out_biz_no").isEmpty() || !paramValue(params, "refund_fee").isEmpty();
}

core::Result<core::RefundNotification> parseRefundNotify(const Params &params)
{
    const auto field = [&params](QByteArrayView name) { return QString::fromUtf8(paramValue(params, name)); };
    const QString notifyId = field("notify_id");
    const QString tradeStatus = field("trade_status");
    const QString sellerId = field("seller_id");
    const QString appId = field("app_id");
    if (notifyId.isEmpty() || tradeStatus.isEmpty() || sellerId.isEmpty() || appId.isEmpty()
        || field("gmt_refund").isEmpty())
        return invalid(QStringLiteral(
            "Alipay refund notification lacks notify_id, trade_status, seller_id, app_id or gmt_refund"));
    const QString tradeNo = field("trade_no");
    const QString outTradeNo = field("out_trade_no");
    const QString outBizNo = field("out_biz_no");
    if (!isValidTradeNo(tradeNo) || !isValidTradeNo(outTradeNo) || !isValidTradeNo(outBizNo))
        return invalid(
            QStringLiteral("Alipay refund: trade_no, out_trade_no or out_biz_no is not 1-64 of [A-Za-z0-9_-]"));
    const auto refunded = parseAmountFen(field("refund_fee"));
    const auto total = parseAmountFen(field("total_amount"));
    if (!refunded || !total || *refunded > *total)
        return invalid(QStringLiteral(
            "Alipay refund_fee and total_amount must be positive yuan amounts, refund_fee <= total_amount"));

    core::RefundNotification n;
    n.channel = core::Channel::Alipay;
    n.state = core::RefundNotification::State::Success;
    n.refundNo = outBizNo;
    n.paymentNo = outTradeNo;
    n.payNo = tradeNo;
    n.refundedTotalFen = *refunded;
    n.totalFen = *total;
    n.refundStatus = tradeStatus;
    n.merchantId = sellerId;
    n.appId = appId;
    n.eventId = notifyId;
    return n;
}

} // namespace payonce::platform::alipay
