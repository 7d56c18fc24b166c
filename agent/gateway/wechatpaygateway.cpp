#include "wechatpaygateway.h"

#include "blockinghttp.h"
#include "crypto/securerandom.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>

namespace payonce::gateway {

using core::Error;
using core::ErrorCode;

namespace {

bool isTokenOfLength(const QString &text, qsizetype minimum, qsizetype maximum)
{
    if (text.size() < minimum || text.size() > maximum)
        return false;
    for (QChar c : text) {
        const bool ok = (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9') || c == u'_'
                        || c == u'-';
        if (!ok)
            return false;
    }
    return true;
}

} // namespace

bool isValidOutTradeNo(const QString &paymentNo)
{
    return isTokenOfLength(paymentNo, 6, 32);
}

bool isValidOutRefundNo(const QString &refundNo)
{
    return isTokenOfLength(refundNo, 1, 64);
}

struct WeChatPayGateway::Reply {
    int status = 0;
    QJsonObject json;
    QString code; ///< the error code of a 4xx body, empty for 2xx
};

namespace {

QString describe(int status, const QJsonObject &json)
{
    return QStringLiteral("HTTP %1 %2: %3")
        .arg(status)
        .arg(json.value(u"code").toString(), json.value(u"message").toString().left(200));
}

// The error of a verified non-2xx answer (401 and 5xx are handled before verification).
Error errorFor(int status, const QJsonObject &json)
{
    const QString code = json.value(u"code").toString();
    const QString text = QStringLiteral("WeChat Pay refused: ") + describe(status, json);
    if (code == u"SYSTEM_ERROR" || code == u"BANKERROR" || code == u"FREQUENCY_LIMITED")
        return Error::make(ErrorCode::Unavailable, text, QStringLiteral("the payment platform is unavailable"));
    if (code == u"SIGN_ERROR" || code == u"NO_AUTH" || code == u"APPID_MCHID_NOT_MATCH" || code == u"MCH_NOT_EXISTS")
        return Error::make(ErrorCode::Misconfigured, text,
                           QStringLiteral("the payment platform refused our merchant credentials"));
    if (code == u"ORDERPAID" || code == u"ORDER_CLOSED" || code == u"OUT_TRADE_NO_USED" || code == u"TRADE_ERROR")
        return Error::make(ErrorCode::Conflict, text, QStringLiteral("the payment platform refused: %1").arg(code));
    if (code == u"ORDER_NOT_EXIST" || status == 404)
        return Error::make(ErrorCode::NotFound, text, QStringLiteral("the payment platform does not know this trade"));
    return Error::make(ErrorCode::InvalidInput, text, QStringLiteral("the payment platform refused the request"));
}

// A refund's refusals: the platform's business rules (over-refund, a trade that cannot be
// refunded, a reused out_refund_no, the merchant's balance) are Conflict — nothing was
// refunded and the same request will be refused again.
Error refundErrorFor(int status, const QJsonObject &json)
{
    const QString code = json.value(u"code").toString();
    if (code == u"RESOURCE_NOT_EXISTS" || code == u"ORDER_NOT_EXIST" || status == 404)
        return Error::make(ErrorCode::NotFound,
                           QStringLiteral("WeChat Pay refused the refund: ") + describe(status, json),
                           QStringLiteral("the payment platform does not know this trade"));
    if (code == u"INVALID_REQUEST" || code == u"NOT_ENOUGH" || code == u"USER_ACCOUNT_ABNORMAL")
        return Error::make(ErrorCode::Conflict,
                           QStringLiteral("WeChat Pay refused the refund: ") + describe(status, json),
                           QStringLiteral("the payment platform refused the refund: %1").arg(code));
    return errorFor(status, json);
}

core::Result<core::GatewayRefund> refundFromJson(const QJsonObject &json, const QString &paymentNo,
                                                 const QString &refundNo)
{
    if (json.value(u"out_refund_no").toString() != refundNo
        || (!paymentNo.isEmpty() && json.value(u"out_trade_no").toString() != paymentNo))
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("WeChat Pay refund %1: answer names another refund or trade").arg(refundNo));
    core::GatewayRefund refund;
    refund.refundNo = refundNo;
    refund.refundId = json.value(u"refund_id").toString();
    refund.paymentNo = json.value(u"out_trade_no").toString();
    refund.payNo = json.value(u"transaction_id").toString();
    refund.amountFen = json.value(u"amount").toObject().value(u"refund").toInteger();
    const QString status = json.value(u"status").toString();
    if (status == u"SUCCESS")
        refund.state = core::GatewayRefundState::Success;
    else if (status == u"PROCESSING")
        refund.state = core::GatewayRefundState::Processing;
    else if (status == u"CLOSED")
        refund.state = core::GatewayRefundState::Closed;
    else if (status == u"ABNORMAL")
        refund.state = core::GatewayRefundState::Abnormal;
    else
        return Error::make(
            ErrorCode::Unavailable,
            QStringLiteral("WeChat Pay refund %1: unknown status \"%2\"").arg(refundNo, status.left(32)));
    if (refund.refundId.isEmpty() || refund.amountFen <= 0)
        return Error::make(
            ErrorCode::Unavailable,
            QStringLiteral("WeChat Pay refund %1: answer without refund_id or amount.refund").arg(refundNo));
    return refund;
}

} // namespace

WeChatPayGateway::WeChatPayGateway(WeChatPayOptions options) : m_options(std::move(options))
{
    while (m_options.baseUrl.endsWith(u'/'))
        m_options.baseUrl.chop(1);
}

core::Result<WeChatPayGateway::Reply> WeChatPayGateway::call(QByteArrayView method, const QByteArray &pathAndQuery,
                                                             const QByteArray &body, const QString &traceParent)
{
    const qint64 timestamp = QDateTime::currentSecsSinceEpoch();
    auto nonce = crypto::nonceString(32);
    if (!nonce)
        return nonce.error();
    auto authorization = platform::wechat::signRequest(m_options.merchantKey, m_options.mchid.toLatin1(),
                                                       m_options.merchantSerial.toLatin1(), method, pathAndQuery,
                                                       timestamp, nonce->toLatin1(), body);
    if (!authorization)
        return authorization.error();

    HttpRequest request;
    request.method = method.toByteArray();
    request.url = QUrl(m_options.baseUrl + QString::fromLatin1(pathAndQuery), QUrl::StrictMode);
    request.body = body;
    request.timeoutMs = m_options.timeoutMs;
    request.headers = {{"Authorization", *authorization}, {"Accept", "application/json"}, {"User-Agent", "payonce/1"}};
    if (!body.isEmpty())
        request.headers.append(qMakePair(QByteArray("Content-Type"), QByteArray("application/json")));
    if (!traceParent.isEmpty())
        request.headers.append(qMakePair(QByteArray("traceparent"), traceParent.toLatin1()));

    const HttpResponse response = sendBlocking(request);
    const QString what = QString::fromLatin1(method) + u' ' + QString::fromLatin1(pathAndQuery);
    if (response.outcome == HttpResponse::Outcome::TimedOut)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("WeChat Pay %1: timed out (%2)").arg(what, response.errorText),
                           QStringLiteral("the payment platform did not answer in time"));
    if (response.outcome == HttpResponse::Outcome::Failed)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("WeChat Pay %1: %2").arg(what, response.errorText),
                           QStringLiteral("the payment platform is unreachable"));

    const QJsonObject json = QJsonDocument::fromJson(response.body).object();
    if (response.status >= 500 || response.status == 429)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("WeChat Pay %1: %2").arg(what, describe(response.status, json)),
                           QStringLiteral("the payment platform is unavailable"));
    if (response.status == 401)
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("WeChat Pay %1: our request signature was refused: %2")
                               .arg(what, describe(response.status, json)),
                           QStringLiteral("the payment platform refused our merchant credentials"));

    const platform::wechat::SignedHeaders signedHeaders{
        response.header("Wechatpay-Timestamp"), response.header("Wechatpay-Nonce"),
        response.header("Wechatpay-Signature"), response.header("Wechatpay-Serial")};
    if (auto verified = m_options.platformKeys.verify(signedHeaders, response.body, QDateTime::currentSecsSinceEpoch(),
                                                      m_options.timestampWindowSeconds);
        !verified) {
        return Error::make(ErrorCode::BadSignature,
                           QStringLiteral("WeChat Pay %1: HTTP %2 response refused: %3")
                               .arg(what)
                               .arg(response.status)
                               .arg(verified.error().internalMessage),
                           QStringLiteral("the payment platform's answer could not be verified"));
    }
    if (response.status < 200 || response.status >= 400)
        return Reply{response.status, json, json.value(u"code").toString()};
    if (response.status >= 300)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("WeChat Pay %1: unexpected HTTP %2").arg(what).arg(response.status));
    return Reply{response.status, json, {}};
}

core::Result<core::GatewayOrder> WeChatPayGateway::createOrder(const core::GatewayOrderRequest &request)
{
    if (!isValidOutTradeNo(request.paymentNo))
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("out_trade_no must be 6-32 of [A-Za-z0-9_-]"));
    if (request.amountFen <= 0)
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("amount must be positive"));
    QJsonObject body{
        {QStringLiteral("appid"), m_options.appid},
        {QStringLiteral("mchid"), m_options.mchid},
        {QStringLiteral("description"),
         request.description.isEmpty() ? request.orderNo : request.description.left(127)},
        {QStringLiteral("out_trade_no"), request.paymentNo},
        {QStringLiteral("notify_url"), request.notifyUrl},
        {QStringLiteral("amount"), QJsonObject{{QStringLiteral("total"), request.amountFen},
                                               {QStringLiteral("currency"), QStringLiteral("CNY")}}},
    };
    if (!request.orderNo.isEmpty())
        body.insert(QStringLiteral("attach"), request.orderNo.left(127));
    auto reply = call("POST", "/v3/pay/transactions/native", QJsonDocument(body).toJson(QJsonDocument::Compact),
                      request.traceParent);
    if (!reply)
        return reply.error();
    if (reply->status >= 400)
        return errorFor(reply->status, reply->json);
    const QString codeUrl = reply->json.value(u"code_url").toString();
    if (codeUrl.isEmpty())
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("WeChat Pay native order: verified answer without code_url"));
    return core::GatewayOrder{codeUrl};
}

core::Result<core::GatewayTrade> WeChatPayGateway::query(const QString &paymentNo)
{
    if (!isValidOutTradeNo(paymentNo))
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("out_trade_no must be 6-32 of [A-Za-z0-9_-]"));
    const QByteArray path = "/v3/pay/transactions/out-trade-no/" + paymentNo.toLatin1()
                            + "?mchid=" + QUrl::toPercentEncoding(m_options.mchid);
    auto reply = call("GET", path, {}, {});
    if (!reply)
        return reply.error();
    core::GatewayTrade trade;
    if (reply->status >= 400) {
        if (reply->status == 404 || reply->code == u"ORDER_NOT_EXIST")
            return trade; // NotFound: a successful answer
        return errorFor(reply->status, reply->json);
    }
    const QJsonObject &json = reply->json;
    if (json.value(u"out_trade_no").toString() != paymentNo
        || (json.contains(u"mchid") && json.value(u"mchid").toString() != m_options.mchid))
        return Error::make(
            ErrorCode::Unavailable,
            QStringLiteral("WeChat Pay query %1: answer names another trade or merchant").arg(paymentNo));
    const QString state = json.value(u"trade_state").toString();
    if (state == u"SUCCESS") {
        trade.state = core::GatewayTradeState::Paid;
        trade.payNo = json.value(u"transaction_id").toString();
        trade.amountFen = json.value(u"amount").toObject().value(u"total").toInteger();
        if (trade.payNo.isEmpty() || trade.amountFen <= 0)
            return Error::make(
                ErrorCode::Unavailable,
                QStringLiteral("WeChat Pay query %1: SUCCESS without transaction_id or amount").arg(paymentNo));
    } else if (state == u"NOTPAY" || state == u"USERPAYING") {
        trade.state = core::GatewayTradeState::NotPaid;
        trade.codeUrl = json.value(u"code_url").toString();
    } else if (state == u"CLOSED" || state == u"REVOKED" || state == u"PAYERROR") {
        trade.state = core::GatewayTradeState::Closed;
    } else if (state == u"REFUND") {
        trade.state = core::GatewayTradeState::Refunded;
        trade.payNo = json.value(u"transaction_id").toString();
        trade.amountFen = json.value(u"amount").toObject().value(u"total").toInteger();
    } else {
        return Error::make(
            ErrorCode::Unavailable,
            QStringLiteral("WeChat Pay query %1: unknown trade_state \"%2\"").arg(paymentNo, state.left(32)));
    }
    return trade;
}

core::Result<void> WeChatPayGateway::close(const QString &paymentNo)
{
    if (!isValidOutTradeNo(paymentNo))
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("out_trade_no must be 6-32 of [A-Za-z0-9_-]"));
    const QByteArray body =
        QJsonDocument(QJsonObject{{QStringLiteral("mchid"), m_options.mchid}}).toJson(QJsonDocument::Compact);
    auto reply = call("POST", "/v3/pay/transactions/out-trade-no/" + paymentNo.toLatin1() + "/close", body, {});
    if (!reply)
        return reply.error();
    if (reply->status < 400)
        return {};
    if (reply->status == 404 || reply->code == u"ORDER_NOT_EXIST" || reply->code == u"ORDER_CLOSED")
        return {}; // never existed or already closed: closing is idempotent
    return errorFor(reply->status, reply->json);
}

core::Result<core::GatewayRefund> WeChatPayGateway::refund(const core::GatewayRefundRequest &request)
{
    if (!isValidOutTradeNo(request.paymentNo) || !isValidOutRefundNo(request.refundNo))
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("out_trade_no must be 6-32 and out_refund_no 1-64 of [A-Za-z0-9_-]"));
    if (request.amountFen <= 0 || request.totalFen < request.amountFen)
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("refund amount must be positive and at most the total"));
    QJsonObject body{
        {QStringLiteral("out_refund_no"), request.refundNo},
        {QStringLiteral("amount"), QJsonObject{{QStringLiteral("refund"), request.amountFen},
                                               {QStringLiteral("total"), request.totalFen},
                                               {QStringLiteral("currency"), QStringLiteral("CNY")}}},
    };
    // transaction_id and out_trade_no are alternatives; the platform prefers the former.
    if (!request.payNo.isEmpty())
        body.insert(QStringLiteral("transaction_id"), request.payNo);
    else
        body.insert(QStringLiteral("out_trade_no"), request.paymentNo);
    if (!request.reason.isEmpty())
        body.insert(QStringLiteral("reason"), request.reason.left(80));
    if (!request.notifyUrl.isEmpty())
        body.insert(QStringLiteral("notify_url"), request.notifyUrl);
    auto reply = call("POST", "/v3/refund/domestic/refunds", QJsonDocument(body).toJson(QJsonDocument::Compact), {});
    if (!reply)
        return reply.error();
    if (reply->status >= 400)
        return refundErrorFor(reply->status, reply->json);
    return refundFromJson(reply->json, request.paymentNo, request.refundNo);
}

core::Result<core::GatewayRefund> WeChatPayGateway::queryRefund(const QString &paymentNo, const QString &refundNo)
{
    if (!isValidOutRefundNo(refundNo))
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("out_refund_no must be 1-64 of [A-Za-z0-9_-]"));
    auto reply = call("GET", "/v3/refund/domestic/refunds/" + refundNo.toLatin1(), {}, {});
    if (!reply)
        return reply.error();
    if (reply->status >= 400) {
        if (reply->status == 404 || reply->code == u"RESOURCE_NOT_EXISTS") {
            core::GatewayRefund none; // NotFound: a successful answer
            none.refundNo = refundNo;
            none.paymentNo = paymentNo;
            return none;
        }
        return refundErrorFor(reply->status, reply->json);
    }
    return refundFromJson(reply->json, paymentNo, refundNo);
}

} // namespace payonce::gateway
