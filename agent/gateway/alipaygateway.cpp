#include "alipaygateway.h"

#include "blockinghttp.h"
#include "platform/alipay.h"
#include "shared/money.h"
#include "wechatpaygateway.h" // isValidOutTradeNo

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>

namespace payonce::gateway {

using core::Error;
using core::ErrorCode;

struct AlipayGateway::Reply {
    QJsonObject json; ///< the verified <method>_response object
    QString code;     ///< "10000" on success
    QString subCode;
};

namespace {

QString describe(const QJsonObject &json)
{
    return QStringLiteral("code %1 %2, sub_code %3 %4")
        .arg(json.value(u"code").toString(), json.value(u"msg").toString().left(100),
             json.value(u"sub_code").toString(), json.value(u"sub_msg").toString().left(200));
}

Error errorFor(const QByteArray &method, const QJsonObject &json)
{
    const QString code = json.value(u"code").toString();
    const QString sub = json.value(u"sub_code").toString();
    const QString text = QStringLiteral("Alipay %1 refused: %2").arg(QString::fromLatin1(method), describe(json));
    if (code == u"20000" || sub == u"ACQ.SYSTEM_ERROR" || sub.startsWith(u"isp."))
        return Error::make(ErrorCode::Unavailable, text, QStringLiteral("the payment platform is unavailable"));
    if (code == u"40006" || sub == u"isv.invalid-signature" || sub == u"isv.invalid-app-id"
        || sub == u"isv.missing-signature" || sub == u"isv.invalid-signature-type")
        return Error::make(ErrorCode::Misconfigured, text,
                           QStringLiteral("the payment platform refused our merchant credentials"));
    if (sub == u"ACQ.TRADE_HAS_SUCCESS" || sub == u"ACQ.TRADE_HAS_CLOSE" || sub == u"ACQ.TRADE_STATUS_ERROR"
        || sub == u"ACQ.CONTEXT_INCONSISTENT" || sub == u"ACQ.TRADE_HAS_FINISHED"
        || sub == u"ACQ.REFUND_AMT_NOT_EQUAL_TOTAL" || sub == u"ACQ.SELLER_BALANCE_NOT_ENOUGH")
        return Error::make(ErrorCode::Conflict, text, QStringLiteral("the payment platform refused: %1").arg(sub));
    if (sub == u"ACQ.TRADE_NOT_EXIST")
        return Error::make(ErrorCode::NotFound, text, QStringLiteral("the payment platform does not know this trade"));
    return Error::make(ErrorCode::InvalidInput, text, QStringLiteral("the payment platform refused the request"));
}

QByteArray formEncode(const platform::alipay::Params &params)
{
    QByteArray body;
    for (const auto &[key, value] : params) {
        if (!body.isEmpty())
            body.append('&');
        body.append(QUrl::toPercentEncoding(QString::fromLatin1(key))).append('=').append(value.toPercentEncoding());
    }
    return body;
}

} // namespace

AlipayGateway::AlipayGateway(AlipayOptions options) : m_options(std::move(options))
{
    while (m_options.baseUrl.endsWith(u'/'))
        m_options.baseUrl.chop(1);
}

core::Result<AlipayGateway::Reply> AlipayGateway::call(const QByteArray &method, const QByteArray &bizContent,
                                                       const QString &notifyUrl, const QString &traceParent)
{
    // Alipay wants the request time in Beijing time (UTC+8), whatever our time zone.
    const QString timestamp = QDateTime::currentDateTimeUtc().addSecs(8 * 3600).toString(
        QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    platform::alipay::Params params{
        {"app_id", m_options.appId.toUtf8()},
        {"method", method},
        {"format", "JSON"},
        {"charset", "utf-8"},
        {"sign_type", "RSA2"},
        {"timestamp", timestamp.toLatin1()},
        {"version", "1.0"},
        {"biz_content", bizContent},
    };
    if (!notifyUrl.isEmpty())
        params.append(qMakePair(QByteArray("notify_url"), notifyUrl.toUtf8()));
    auto sign = platform::alipay::signParams(m_options.appPrivateKey, params);
    if (!sign)
        return sign.error();
    params.append(qMakePair(QByteArray("sign"), *sign));

    HttpRequest request;
    request.method = "POST";
    request.url = QUrl(m_options.baseUrl + QStringLiteral("/gateway.do"), QUrl::StrictMode);
    request.body = formEncode(params);
    request.timeoutMs = m_options.timeoutMs;
    request.headers = {{"Content-Type", "application/x-www-form-urlencoded;charset=utf-8"},
                       {"Accept", "application/json"},
                       {"User-Agent", "payonce/1"}};
    if (!traceParent.isEmpty())
        request.headers.append(qMakePair(QByteArray("traceparent"), traceParent.toLatin1()));

    const HttpResponse response = sendBlocking(request);
    const QString what = QString::fromLatin1(method);
    if (response.outcome == HttpResponse::Outcome::TimedOut)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("Alipay %1: timed out (%2)").arg(what, response.errorText),
                           QStringLiteral("the payment platform did not answer in time"));
    if (response.outcome == HttpResponse::Outcome::Failed)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("Alipay %1: %2").arg(what, response.errorText),
                           QStringLiteral("the payment platform is unreachable"));
    if (response.status >= 500 || response.status == 429)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("Alipay %1: HTTP %2").arg(what).arg(response.status),
                           QStringLiteral("the payment platform is unavailable"));
    if (response.status != 200)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("Alipay %1: unexpected HTTP %2").arg(what).arg(response.status),
                           QStringLiteral("the payment platform is unavailable"));

    auto verified = platform::alipay::verifiedResponse(m_options.alipayPublicKey, response.body, method);
    if (!verified) {
        // Alipay does not sign some refusals of our own credentials; those claim nothing
        // about a trade, so believing them unsigned cannot make us act on a forgery.
        const QJsonObject top = QJsonDocument::fromJson(response.body).object();
        const QJsonObject inner = top.value(QString::fromLatin1(platform::alipay::responseKey(method))).toObject();
        const QString code = inner.value(u"code").toString();
        if (!top.contains(u"sign") && (code == u"40002" || code == u"40006")) {
            Error e = errorFor(method, inner);
            if (e.code == ErrorCode::Misconfigured)
                return e;
        }
        return Error::make(
            ErrorCode::BadSignature,
            QStringLiteral("Alipay %1: response refused: %2").arg(what, verified.error().internalMessage),
            QStringLiteral("the payment platform's answer could not be verified"));
    }
    const QJsonObject json = QJsonDocument::fromJson(*verified).object();
    return Reply{json, json.value(u"code").toString(), json.value(u"sub_code").toString()};
}

core::Result<core::GatewayOrder> AlipayGateway::createOrder(const core::GatewayOrderRequest &request)
{
    if (!isValidOutTradeNo(request.paymentNo))
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("out_trade_no must be 6-32 of [A-Za-z0-9_-]"));
    if (request.amountFen <= 0)
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("amount must be positive"));
    const QJsonObject biz{
        {QStringLiteral("out_trade_no"), request.paymentNo},
        {QStringLiteral("total_amount"), formatAmountFen(request.amountFen)},
        {QStringLiteral("subject"), request.description.isEmpty() ? request.orderNo : request.description.left(256)},
    };
    auto reply = call("alipay.trade.precreate", QJsonDocument(biz).toJson(QJsonDocument::Compact), request.notifyUrl,
                      request.traceParent);
    if (!reply)
        return reply.error();
    if (reply->code != u"10000")
        return errorFor("alipay.trade.precreate", reply->json);
    const QString qr = reply->json.value(u"qr_code").toString();
    if (qr.isEmpty())
        return Error::make(ErrorCode::Unavailable, QStringLiteral("Alipay precreate: verified answer without qr_code"));
    return core::GatewayOrder{qr};
}

core::Result<core::GatewayTrade> AlipayGateway::query(const QString &paymentNo)
{
    if (!isValidOutTradeNo(paymentNo))
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("out_trade_no must be 6-32 of [A-Za-z0-9_-]"));
    const QJsonObject biz{{QStringLiteral("out_trade_no"), paymentNo}};
    auto reply = call("alipay.trade.query", QJsonDocument(biz).toJson(QJsonDocument::Compact), {}, {});
    if (!reply)
        return reply.error();
    core::GatewayTrade trade;
    if (reply->code != u"10000") {
        if (reply->subCode == u"ACQ.TRADE_NOT_EXIST")
            return trade; // NotFound: a successful answer
        return errorFor("alipay.trade.query", reply->json);
    }
    const QJsonObject &json = reply->json;
    if (json.value(u"out_trade_no").toString() != paymentNo)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("Alipay query %1: answer names another trade").arg(paymentNo));
    if (!m_options.sellerId.isEmpty() && json.contains(u"seller_id")
        && json.value(u"seller_id").toString() != m_options.sellerId)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("Alipay query %1: answer names another seller").arg(paymentNo));
    const QString status = json.value(u"trade_status").toString();
    if (status == u"TRADE_SUCCESS" || status == u"TRADE_FINISHED") {
        trade.state = core::GatewayTradeState::Paid;
        trade.payNo = json.value(u"trade_no").toString();
        const auto fen = parseAmountFen(json.value(u"total_amount").toString());
        if (trade.payNo.isEmpty() || !fen)
            return Error::make(
                ErrorCode::Unavailable,
                QStringLiteral("Alipay query %1: paid without trade_no or a valid total_amount").arg(paymentNo));
        trade.amountFen = *fen;
    } else if (status == u"WAIT_BUYER_PAY") {
        trade.state = core::GatewayTradeState::NotPaid;
    } else if (status == u"TRADE_CLOSED") {
        trade.state = core::GatewayTradeState::Closed;
    } else {
        return Error::make(
            ErrorCode::Unavailable,
            QStringLiteral("Alipay query %1: unknown trade_status \"%2\"").arg(paymentNo, status.left(32)));
    }
    return trade;
}

core::Result<void> AlipayGateway::close(const QString &paymentNo)
{
    if (!isValidOutTradeNo(paymentNo))
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("out_trade_no must be 6-32 of [A-Za-z0-9_-]"));
    const QJsonObject biz{{QStringLiteral("out_trade_no"), paymentNo}};
    auto reply = call("alipay.trade.close", QJsonDocument(biz).toJson(QJsonDocument::Compact), {}, {});
    if (!reply)
        return reply.error();
    if (reply->code == u"10000" || reply->subCode == u"ACQ.TRADE_NOT_EXIST")
        return {};
    return errorFor("alipay.trade.close", reply->json);
}

core::Result<core::GatewayRefund> AlipayGateway::refund(const core::GatewayRefundRequest &request)
{
    if (!isValidOutTradeNo(request.paymentNo) || !isValidOutRefundNo(request.refundNo))
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("out_trade_no must be 6-32 and out_request_no 1-64 of [A-Za-z0-9_-]"));
    if (request.amountFen <= 0 || (request.totalFen > 0 && request.totalFen < request.amountFen))
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("refund amount must be positive and at most the total"));
    QJsonObject biz{
        {QStringLiteral("out_trade_no"), request.paymentNo},
        {QStringLiteral("refund_amount"), formatAmountFen(request.amountFen)},
        {QStringLiteral("out_request_no"), request.refundNo},
    };
    if (!request.payNo.isEmpty())
        biz.insert(QStringLiteral("trade_no"), request.payNo);
    if (!request.reason.isEmpty())
        biz.insert(QStringLiteral("refund_reason"), request.reason.left(256));
    auto reply = call("alipay.trade.refund", QJsonDocument(biz).toJson(QJsonDocument::Compact), request.notifyUrl, {});
    if (!reply)
        return reply.error();
    if (reply->code != u"10000")
        return errorFor("alipay.trade.refund", reply->json);
    const QJsonObject &json = reply->json;
    if (json.value(u"out_trade_no").toString() != request.paymentNo)
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("Alipay refund %1: answer names another trade").arg(request.refundNo));
    core::GatewayRefund refund;
    refund.state = core::GatewayRefundState::Success;
    refund.refundNo = request.refundNo;
    refund.paymentNo = request.paymentNo;
    refund.payNo = json.value(u"trade_no").toString();
    refund.amountFen = request.amountFen;
    return refund;
}

core::Result<core::GatewayRefund> AlipayGateway::queryRefund(const QString &paymentNo, const QString &refundNo)
{
    if (!isValidOutTradeNo(paymentNo) || !isValidOutRefundNo(refundNo))
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("out_trade_no must be 6-32 and out_request_no 1-64 of [A-Za-z0-9_-]"));
    const QJsonObject biz{{QStringLiteral("out_trade_no"), paymentNo}, {QStringLiteral("out_request_no"), refundNo}};
    auto reply = call("alipay.trade.fastpay.refund.query", QJsonDocument(biz).toJson(QJsonDocument::Compact), {}, {});
    if (!reply)
        return reply.error();
    if (reply->code != u"10000")
        return errorFor("alipay.trade.fastpay.refund.query", reply->json);
    const QJsonObject &json = reply->json;
    core::GatewayRefund refund;
    refund.refundNo = refundNo;
    refund.paymentNo = paymentNo;
    if (!json.contains(u"out_request_no") && !json.contains(u"refund_amount"))
        return refund; // NotFound: Alipay answers an empty success for an unknown refund
    if (json.value(u"out_request_no").toString() != refundNo
        || (json.contains(u"out_trade_no") && json.value(u"out_trade_no").toString() != paymentNo))
        return Error::make(
            ErrorCode::Unavailable,
            QStringLiteral("Alipay refund query %1: answer names another refund or trade").arg(refundNo));
    const QString status = json.value(u"refund_status").toString();
    const auto fen = parseAmountFen(json.value(u"refund_amount").toString());
    if (!fen || !(status.isEmpty() || status == u"REFUND_SUCCESS"))
        return Error::make(ErrorCode::Unavailable,
                           QStringLiteral("Alipay refund query %1: refund_status \"%2\", refund_amount \"%3\"")
                               .arg(refundNo, status.left(32), json.value(u"refund_amount").toString().left(32)));
    refund.state = core::GatewayRefundState::Success;
    refund.payNo = json.value(u"trade_no").toString();
    refund.amountFen = *fen;
    return refund;
}

} // namespace payonce::gateway
