// The simulated WeChat Pay v3 API: Native orders, query, close, refunds.
#include "simjson_p.h"
#include "simserver.h"

#include "crypto/securerandom.h"
#include "platform/alipay.h"
#include "platform/wechatpay.h"
#include "shared/money.h"

#include <QDateTime>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTimer>

namespace payonce::sim {

using core::Channel;
using namespace payonce::platform;

SimServer::Answer SimServer::wechatAnswer(int status, const QByteArray &body)
{
    Answer answer;
    answer.status = status;
    const QByteArray timestamp = QByteArray::number(QDateTime::currentSecsSinceEpoch());
    const QByteArray nonce = randomToken(32).toLatin1();
    auto signature = m_platformKey.signBase64(wechat::responseMessage(timestamp, nonce, body));
    answer.body = body;
    QByteArray signedNonce = nonce;
    if (m_state.faults(Channel::WeChat).tamperResponses) {
        if (answer.body.isEmpty())
            signedNonce = nonce + "X"; // nothing to alter in a 204: alter what was signed
        else
            answer.body[answer.body.size() / 2] = static_cast<char>(answer.body[answer.body.size() / 2] ^ 0x01);
    }
    answer.headers = {{"Wechatpay-Timestamp", timestamp},
                      {"Wechatpay-Nonce", signedNonce},
                      {"Wechatpay-Signature", signature ? *signature : QByteArray()},
                      {"Wechatpay-Serial", m_options.platformSerial.toLatin1()},
                      {"Request-ID", randomToken(16).toLatin1()}};
    if (!body.isEmpty())
        answer.headers.append(qMakePair(QByteArray("Content-Type"), QByteArray("application/json")));
    return answer;
}

SimServer::Answer SimServer::wechatError(int status, const QString &code, const QString &message)
{
    return wechatAnswer(status, compact({{QStringLiteral("code"), code}, {QStringLiteral("message"), message}}));
}

std::optional<SimServer::Answer> SimServer::wechatCheckSignature(const QHttpServerRequest &request)
{
    auto fail = [this](const QString &why) {
        m_state.countSignatureFailure(Channel::WeChat);
        return std::optional<Answer>(wechatError(401, QStringLiteral("SIGN_ERROR"), why));
    };
    auto authorization = wechat::parseAuthorization(request.value("Authorization"));
    if (!authorization)
        return fail(authorization.error().internalMessage);
    if (!m_options.mchid.isEmpty() && authorization->mchid != m_options.mchid.toLatin1())
        return fail(QStringLiteral("mchid in Authorization is not the configured merchant"));
    if (!m_options.merchantSerial.isEmpty() && authorization->serialNo != m_options.merchantSerial.toLatin1())
        return fail(QStringLiteral("serial_no is not the merchant's certificate serial"));
    bool numeric = false;
    const qint64 timestamp = authorization->timestamp.toLongLong(&numeric);
    if (!numeric || qAbs(QDateTime::currentSecsSinceEpoch() - timestamp) > kRequestWindowSeconds)
        return fail(QStringLiteral("timestamp outside the allowed window"));
    QByteArray target = request.url().path(QUrl::FullyEncoded).toLatin1();
    const QString query = request.url().query(QUrl::FullyEncoded);
    if (!query.isEmpty())
        target += '?' + query.toLatin1();
    QByteArray method;
    switch (request.method()) {
    case QHttpServerRequest::Method::Get: method = "GET"; break;
    case QHttpServerRequest::Method::Post: method = "POST"; break;
    default: method = "OTHER"; break;
    }
    const QByteArray message = wechat::requestMessage(method, target, timestamp, authorization->nonce, request.body());
    if (!m_options.wechatMerchantKey.verifyBase64(message, authorization->signature))
        return fail(QStringLiteral("signature does not verify with the merchant public key"));
    return std::nullopt;
}

void SimServer::routeWeChat()
{
    m_server.route(QStringLiteral("/v3/pay/transactions/native"), QHttpServerRequest::Method::Post,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       wechatNative(request, std::make_shared<QHttpServerResponder>(std::move(responder)));
                   });
    m_server.route(
        QStringLiteral("/v3/pay/transactions/out-trade-no/<arg>"), QHttpServerRequest::Method::Get,
        [this](const QString &outTradeNo, const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            wechatQuery(outTradeNo, request, std::make_shared<QHttpServerResponder>(std::move(responder)));
        });
    m_server.route(
        QStringLiteral("/v3/pay/transactions/out-trade-no/<arg>/close"), QHttpServerRequest::Method::Post,
        [this](const QString &outTradeNo, const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            wechatClose(outTradeNo, request, std::make_shared<QHttpServerResponder>(std::move(responder)));
        });
    m_server.route(QStringLiteral("/v3/refund/domestic/refunds"), QHttpServerRequest::Method::Post,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       wechatRefund(request, std::make_shared<QHttpServerResponder>(std::move(responder)));
                   });
    m_server.route(
        QStringLiteral("/v3/refund/domestic/refunds/<arg>"), QHttpServerRequest::Method::Get,
        [this](const QString &outRefundNo, const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            wechatRefundQuery(outRefundNo, request, std::make_shared<QHttpServerResponder>(std::move(responder)));
        });
}

void SimServer::wechatNative(const QHttpServerRequest &request, ResponderPtr responder)
{
    const QString endpoint = QStringLiteral("wechat.native");
    if (injectError(Channel::WeChat, endpoint, responder))
        return;
    if (auto refused = wechatCheckSignature(request))
        return deliver(Channel::WeChat, endpoint, responder, *refused);
    const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
    SimTrade proposed;
    proposed.channel = Channel::WeChat;
    proposed.outTradeNo = body.value(u"out_trade_no").toString();
    proposed.amountFen = body.value(u"amount").toObject().value(u"total").toInteger();
    proposed.description = body.value(u"description").toString();
    proposed.notifyUrl = body.value(u"notify_url").toString();
    proposed.merchantId = body.value(u"mchid").toString();
    proposed.appId = body.value(u"appid").toString();
    proposed.traceParent = request.value(QByteArrayLiteral("traceparent"));
    if (proposed.outTradeNo.isEmpty() || proposed.amountFen <= 0 || proposed.description.isEmpty())
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(400, QStringLiteral("PARAM_ERROR"),
                                   QStringLiteral("out_trade_no, amount.total and description are required")));
    if ((!m_options.mchid.isEmpty() && body.value(u"mchid").toString() != m_options.mchid)
        || (!m_options.appid.isEmpty() && body.value(u"appid").toString() != m_options.appid))
        return deliver(
            Channel::WeChat, endpoint, responder,
            wechatError(400, QStringLiteral("APPID_MCHID_NOT_MATCH"), QStringLiteral("appid and mchid do not match")));
    proposed.codeUrl = QStringLiteral("weixin://wxpay/bizpayurl?pr=") + randomToken(10);
    SimTrade trade;
    switch (m_state.create(proposed, &trade)) {
    case SimState::CreateOutcome::Created:
    case SimState::CreateOutcome::Existing:
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatAnswer(200, compact({{QStringLiteral("code_url"), trade.codeUrl}})));
    case SimState::CreateOutcome::AlreadyPaid:
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(400, QStringLiteral("ORDERPAID"), QStringLiteral("order already paid")));
    case SimState::CreateOutcome::AlreadyClosed:
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(400, QStringLiteral("ORDER_CLOSED"), QStringLiteral("order closed")));
    case SimState::CreateOutcome::AmountDiffers:
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(403, QStringLiteral("OUT_TRADE_NO_USED"),
                                   QStringLiteral("out_trade_no used with other parameters")));
    }
}

void SimServer::wechatQuery(const QString &outTradeNo, const QHttpServerRequest &request, ResponderPtr responder)
{
    const QString endpoint = QStringLiteral("wechat.query");
    if (injectError(Channel::WeChat, endpoint, responder))
        return;
    if (auto refused = wechatCheckSignature(request))
        return deliver(Channel::WeChat, endpoint, responder, *refused);
    const auto trade = m_state.find(Channel::WeChat, outTradeNo);
    if (!trade)
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(404, QStringLiteral("ORDER_NOT_EXIST"), QStringLiteral("order does not exist")));
    // WeChat reports a paid trade with refunds as REFUND ("转入退款").
    const QString tradeState = trade->state == SimTrade::State::Paid && trade->refundedFen > 0
                                   ? QStringLiteral("REFUND")
                                   : tradeStateName(trade->state);
    QJsonObject o{{QStringLiteral("appid"), m_options.appid},
                  {QStringLiteral("mchid"), request.query().queryItemValue(QStringLiteral("mchid"))},
                  {QStringLiteral("out_trade_no"), trade->outTradeNo},
                  {QStringLiteral("trade_type"), QStringLiteral("NATIVE")},
                  {QStringLiteral("trade_state"), tradeState},
                  {QStringLiteral("trade_state_desc"), tradeState},
                  {QStringLiteral("amount"), QJsonObject{{QStringLiteral("total"), trade->amountFen},
                                                         {QStringLiteral("currency"), QStringLiteral("CNY")}}}};
    if (trade->state == SimTrade::State::Paid) {
        o.insert(QStringLiteral("transaction_id"), trade->payNo);
        o.insert(QStringLiteral("success_time"), trade->paidAt.toOffsetFromUtc(8 * 3600).toString(Qt::ISODate));
        o.insert(QStringLiteral("amount"), QJsonObject{{QStringLiteral("total"), trade->amountFen},
                                                       {QStringLiteral("payer_total"), trade->amountFen},
                                                       {QStringLiteral("currency"), QStringLiteral("CNY")},
                                                       {QStringLiteral("payer_currency"), QStringLiteral("CNY")}});
    }
    deliver(Channel::WeChat, endpoint, responder, wechatAnswer(200, compact(o)));
}

void SimServer::wechatClose(const QString &outTradeNo, const QHttpServerRequest &request, ResponderPtr responder)
{
    const QString endpoint = QStringLiteral("wechat.close");
    if (injectError(Channel::WeChat, endpoint, responder))
        return;
    if (auto refused = wechatCheckSignature(request))
        return deliver(Channel::WeChat, endpoint, responder, *refused);
    switch (m_state.close(Channel::WeChat, outTradeNo)) {
    case SimState::CloseOutcome::Closed:
    case SimState::CloseOutcome::AlreadyClosed:
        return deliver(Channel::WeChat, endpoint, responder, wechatAnswer(204, {}));
    case SimState::CloseOutcome::NotFound:
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(404, QStringLiteral("ORDER_NOT_EXIST"), QStringLiteral("order does not exist")));
    case SimState::CloseOutcome::Paid:
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(400, QStringLiteral("ORDERPAID"), QStringLiteral("order already paid")));
    }
}

void SimServer::wechatRefund(const QHttpServerRequest &request, ResponderPtr responder)
{
    const QString endpoint = QStringLiteral("wechat.refund");
    if (injectError(Channel::WeChat, endpoint, responder))
        return;
    if (auto refused = wechatCheckSignature(request))
        return deliver(Channel::WeChat, endpoint, responder, *refused);
    m_state.countRefundCall(Channel::WeChat);
    const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
    const QJsonObject amount = body.value(u"amount").toObject();
    SimRefund proposed;
    proposed.channel = Channel::WeChat;
    proposed.outRefundNo = body.value(u"out_refund_no").toString();
    proposed.outTradeNo = body.value(u"out_trade_no").toString();
    proposed.payNo = body.value(u"transaction_id").toString();
    proposed.amountFen = amount.value(u"refund").toInteger();
    proposed.totalFen = amount.value(u"total").toInteger();
    proposed.reason = body.value(u"reason").toString();
    proposed.notifyUrl = body.value(u"notify_url").toString();
    auto invalid = [&](const QString &message) {
        deliver(Channel::WeChat, endpoint, responder, wechatError(400, QStringLiteral("INVALID_REQUEST"), message));
    };
    if (proposed.outRefundNo.isEmpty() || (proposed.outTradeNo.isEmpty() && proposed.payNo.isEmpty())
        || proposed.amountFen <= 0 || proposed.totalFen <= 0 || amount.value(u"currency").toString() != u"CNY")
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(400, QStringLiteral("PARAM_ERROR"),
                                   QStringLiteral("out_refund_no, transaction_id or out_trade_no, amount.refund, "
                                                  "amount.total and amount.currency CNY are required")));
    SimRefund refund;
    switch (m_state.refund(proposed, &refund)) {
    case SimState::RefundOutcome::Created:
        // Accepted as PROCESSING; the simulated bank answers at once, so the refund ends
        // (SUCCESS, or CLOSED under refund_fail) before any later request is served.
        deliver(Channel::WeChat, endpoint, responder, wechatAnswer(200, compact(wechatRefundJson(refund))));
        m_state.finishRefund(Channel::WeChat, refund.outRefundNo, m_state.faults(Channel::WeChat).refundFail);
        return;
    case SimState::RefundOutcome::Existing:
        return deliver(Channel::WeChat, endpoint, responder, wechatAnswer(200, compact(wechatRefundJson(refund))));
    case SimState::RefundOutcome::TradeNotFound:
        return deliver(Channel::WeChat, endpoint, responder,
                       wechatError(404, QStringLiteral("RESOURCE_NOT_EXISTS"), QStringLiteral("order does not exist")));
    case SimState::RefundOutcome::NotPaid: return invalid(QStringLiteral("the order is not paid"));
    case SimState::RefundOutcome::OverRefund:
        return invalid(QStringLiteral("the refund amount exceeds the refundable amount of the order"));
    case SimState::RefundOutcome::RefundNoReused:
        return invalid(QStringLiteral("out_refund_no was used with other parameters"));
    case SimState::RefundOutcome::TotalDiffers:
        return invalid(QStringLiteral("amount.total is not the order's amount"));
    }
}

void SimServer::wechatRefundQuery(const QString &outRefundNo, const QHttpServerRequest &request, ResponderPtr responder)
{
    const QString endpoint = QStringLiteral("wechat.refund_query");
    if (injectError(Channel::WeChat, endpoint, responder))
        return;
    if (auto refused = wechatCheckSignature(request))
        return deliver(Channel::WeChat, endpoint, responder, *refused);
    const auto refund = m_state.findRefund(Channel::WeChat, outRefundNo);
    if (!refund)
        return deliver(
            Channel::WeChat, endpoint, responder,
            wechatError(404, QStringLiteral("RESOURCE_NOT_EXISTS"), QStringLiteral("refund does not exist")));
    deliver(Channel::WeChat, endpoint, responder, wechatAnswer(200, compact(wechatRefundJson(*refund))));
}

} // namespace payonce::sim
