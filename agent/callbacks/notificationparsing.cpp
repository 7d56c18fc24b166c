#include "notificationparsing.h"

#include "crypto/aesgcm.h"
#include "shared/money.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QSet>

namespace payonce::callbacks {

using core::Error;
using core::ErrorCode;
using core::PaymentNotification;

namespace {

Error invalid(const QString &what)
{
    return Error::make(ErrorCode::InvalidInput, what);
}

Error badSignature(const QString &what)
{
    return Error::make(ErrorCode::BadSignature, what);
}

// A string member, or nullopt when absent or not a string.
std::optional<QString> stringMember(const QJsonObject &o, QLatin1StringView name)
{
    const QJsonValue v = o.value(name);
    if (!v.isString())
        return std::nullopt;
    return v.toString();
}

bool isCurrencyCode(QStringView text)
{
    if (text.size() != 3)
        return false;
    for (const QChar c : text) {
        if (c.unicode() < u'A' || c.unicode() > u'Z')
            return false;
    }
    return true;
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

QByteArray paramValue(const gateway::alipay::Params &params, QByteArrayView name)
{
    for (const auto &[key, value] : params) {
        if (key == name)
            return value;
    }
    return {};
}

bool hasParam(const gateway::alipay::Params &params, QByteArrayView name)
{
    for (const auto &p : params) {
        if (p.first == name)
            return true;
    }
    return false;
}

} // namespace

bool isValidTradeNo(QStringView text)
{
    if (text.isEmpty() || text.size() > 64)
        return false;
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        const bool ok = (u >= u'A' && u <= u'Z') || (u >= u'a' && u <= u'z') || (u >= u'0' && u <= u'9') || u == u'_'
                        || u == u'-';
        if (!ok)
            return false;
    }
    return true;
}

// ---- WeChat Pay v3 -----------------------------------------------------------------

core::Result<WeChatEnvelope> parseWeChatEnvelope(QByteArrayView body)
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
    WeChatEnvelope e;
    e.id = *id;
    e.eventType = *eventType;
    e.algorithm = algorithm->toUtf8();
    e.ciphertext = ciphertext->toUtf8();
    e.associatedData = ad.toString().toUtf8();
    e.nonce = nonce->toUtf8();
    return e;
}

gateway::wechat::SignedHeaders weChatSignedHeaders(const core::RawDelivery &delivery)
{
    return {delivery.header("Wechatpay-Timestamp"), delivery.header("Wechatpay-Nonce"),
            delivery.header("Wechatpay-Signature"), delivery.header("Wechatpay-Serial")};
}

core::Result<void> checkWeChatEnvelope(const WeChatEnvelope &envelope)
{
    if (envelope.eventType != QLatin1StringView("TRANSACTION.SUCCESS"))
        return invalid(QStringLiteral("WeChat notification event_type \"%1\" is not TRANSACTION.SUCCESS")
                           .arg(envelope.eventType.left(64)));
    if (envelope.algorithm != "AEAD_AES_256_GCM")
        return invalid(QStringLiteral("WeChat notification resource algorithm is not AEAD_AES_256_GCM"));
    return {};
}

core::Result<QByteArray> decryptWeChatResource(QByteArrayView apiv3Key, const WeChatEnvelope &envelope)
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

core::Result<PaymentNotification> parseWeChatTransaction(QByteArrayView plaintext, const QString &eventId)
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

core::Result<void> checkWeChatRefundEnvelope(const WeChatEnvelope &envelope)
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

core::Result<core::RefundNotification> parseWeChatRefund(QByteArrayView plaintext, const QString &eventId,
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

// ---- Alipay -------------------------------------------------------------------------

core::Result<gateway::alipay::Params> parseForm(QByteArrayView body)
{
    if (body.size() > kMaxNotificationBodyBytes)
        return invalid(QStringLiteral("notification body of %1 bytes is over the %2-byte limit")
                           .arg(body.size())
                           .arg(kMaxNotificationBodyBytes));
    if (body.isEmpty())
        return invalid(QStringLiteral("Alipay notification body is empty"));
    gateway::alipay::Params params;
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

core::Result<void> verifyAlipaySignature(const crypto::PublicKey &alipayKey, const gateway::alipay::Params &params)
{
    if (!hasParam(params, "sign") || paramValue(params, "sign").isEmpty())
        return badSignature(QStringLiteral("Alipay notification is not signed"));
    if (hasParam(params, "sign_type") && paramValue(params, "sign_type") != "RSA2")
        return badSignature(QStringLiteral("Alipay notification sign_type is not RSA2"));
    if (!gateway::alipay::verifyParams(alipayKey, params, gateway::alipay::SignContentKind::Notification))
        return badSignature(QStringLiteral("Alipay notification signature does not verify"));
    return {};
}

core::Result<PaymentNotification> parseAlipayNotify(const gateway::alipay::Params &params)
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

bool isAlipayRefundNotify(const gateway::alipay::Params &params)
{
    return !paramValue(params, "out_biz_no").isEmpty() || !paramValue(params, "refund_fee").isEmpty();
}

core::Result<core::RefundNotification> parseAlipayRefundNotify(const gateway::alipay::Params &params)
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

} // namespace payonce::callbacks
