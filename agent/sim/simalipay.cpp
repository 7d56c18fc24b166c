// The simulated Alipay gateway: precreate, query, close, refunds.
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

namespace {

QJsonObject alipaySuccess()
{
    return {{QStringLiteral("code"), QStringLiteral("10000")}, {QStringLiteral("msg"), QStringLiteral("Success")}};
}

} // namespace

SimServer::Answer SimServer::alipayAnswer(const QByteArray &method, const QJsonObject &response)
{
    QByteArray inner = compact(response);
    auto signature = m_platformKey.signBase64(inner);
    if (m_state.faults(Channel::Alipay).tamperResponses)
        inner.insert(1, ' '); // whitespace only: same meaning, different signed text
    Answer answer;
    answer.headers = {{"Content-Type", "application/json;charset=utf-8"}};
    answer.body = alipay::frameResponse(method, inner, signature ? *signature : QByteArray());
    return answer;
}

void SimServer::routeAlipay()
{
    m_server.route(QStringLiteral("/gateway.do"), QHttpServerRequest::Method::Post,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       alipayGateway(request, std::make_shared<QHttpServerResponder>(std::move(responder)));
                   });
}

void SimServer::alipayGateway(const QHttpServerRequest &request, ResponderPtr responder)
{
    AlipayCall call;
    call.params = parseForm(request.body());
    call.params += parseForm(request.url().query(QUrl::FullyEncoded).toLatin1());
    call.method = param(call.params, "method");
    call.endpoint = call.method.isEmpty() ? QStringLiteral("alipay.unknown") : QString::fromLatin1(call.method);
    call.traceParent = request.value(QByteArrayLiteral("traceparent"));
    call.responder = std::move(responder);
    if (injectError(Channel::Alipay, call.endpoint, call.responder))
        return;
    const auto invalid = [&call, this](const QString &subCode, const QString &subMsg) {
        alipayRefuse(call, QStringLiteral("40002"), QStringLiteral("Invalid Arguments"), subCode, subMsg);
    };
    if (!m_options.alipayAppId.isEmpty() && param(call.params, "app_id") != m_options.alipayAppId.toUtf8()) {
        m_state.countSignatureFailure(Channel::Alipay);
        return invalid(QStringLiteral("isv.invalid-app-id"), QStringLiteral("unknown app_id"));
    }
    if (param(call.params, "sign_type") != "RSA2" || !alipay::verifyParams(m_options.alipayAppKey, call.params)) {
        m_state.countSignatureFailure(Channel::Alipay);
        return invalid(QStringLiteral("isv.invalid-signature"),
                       QStringLiteral("the request signature does not verify"));
    }
    call.biz = QJsonDocument::fromJson(param(call.params, "biz_content")).object();
    if (call.method == "alipay.trade.refund" || call.method == "alipay.trade.fastpay.refund.query")
        return alipayRefund(call);
    call.outTradeNo = call.biz.value(u"out_trade_no").toString();
    if (call.outTradeNo.isEmpty())
        return invalid(QStringLiteral("isv.missing-out-trade-no"),
                       QStringLiteral("biz_content.out_trade_no is required"));
    if (call.method == "alipay.trade.precreate")
        return alipayPrecreate(call);
    if (call.method == "alipay.trade.query")
        return alipayQuery(call);
    if (call.method == "alipay.trade.close")
        return alipayClose(call);
    invalid(QStringLiteral("isv.invalid-method"), QStringLiteral("method not simulated"));
}

void SimServer::alipayPrecreate(const AlipayCall &call)
{
    const auto fen = parseAmountFen(call.biz.value(u"total_amount").toString());
    if (!fen || call.biz.value(u"subject").toString().isEmpty())
        return alipayBusinessError(call, QStringLiteral("ACQ.INVALID_PARAMETER"),
                                   QStringLiteral("total_amount and subject are required"));
    SimTrade proposed;
    proposed.channel = Channel::Alipay;
    proposed.outTradeNo = call.outTradeNo;
    proposed.amountFen = *fen;
    proposed.description = call.biz.value(u"subject").toString();
    proposed.body = call.biz.value(u"body").toString();
    proposed.notifyUrl = QString::fromUtf8(param(call.params, "notify_url"));
    proposed.appId = QString::fromUtf8(param(call.params, "app_id"));
    proposed.traceParent = call.traceParent;
    proposed.codeUrl = QStringLiteral("https://qr.alipay.com/") + randomToken(20).toLower();
    SimTrade trade;
    switch (m_state.create(proposed, &trade)) {
    case SimState::CreateOutcome::Created:
    case SimState::CreateOutcome::Existing: {
        QJsonObject o = alipaySuccess();
        o.insert(QStringLiteral("out_trade_no"), trade.outTradeNo);
        o.insert(QStringLiteral("qr_code"), trade.codeUrl);
        return deliver(Channel::Alipay, call.endpoint, call.responder, alipayAnswer(call.method, o));
    }
    case SimState::CreateOutcome::AlreadyPaid:
        return alipayBusinessError(call, QStringLiteral("ACQ.TRADE_HAS_SUCCESS"), QStringLiteral("trade already paid"));
    case SimState::CreateOutcome::AlreadyClosed:
        return alipayBusinessError(call, QStringLiteral("ACQ.TRADE_HAS_CLOSE"), QStringLiteral("trade closed"));
    case SimState::CreateOutcome::AmountDiffers:
        return alipayBusinessError(call, QStringLiteral("ACQ.CONTEXT_INCONSISTENT"),
                                   QStringLiteral("out_trade_no used with other parameters"));
    }
}

void SimServer::alipayQuery(const AlipayCall &call)
{
    const auto trade = m_state.find(Channel::Alipay, call.outTradeNo);
    if (!trade)
        return alipayBusinessError(call, QStringLiteral("ACQ.TRADE_NOT_EXIST"), QStringLiteral("trade does not exist"));
    QJsonObject o = alipaySuccess();
    o.insert(QStringLiteral("out_trade_no"), trade->outTradeNo);
    o.insert(QStringLiteral("total_amount"), formatAmountFen(trade->amountFen));
    // A fully refunded trade is closed at Alipay.
    const bool fullyRefunded = trade->refundedFen > 0 && trade->refundedFen == trade->amountFen;
    const char *status = fullyRefunded                             ? "TRADE_CLOSED"
                         : trade->state == SimTrade::State::Paid   ? "TRADE_SUCCESS"
                         : trade->state == SimTrade::State::Closed ? "TRADE_CLOSED"
                                                                   : "WAIT_BUYER_PAY";
    o.insert(QStringLiteral("trade_status"), QLatin1String(status));
    if (!trade->payNo.isEmpty()) {
        o.insert(QStringLiteral("trade_no"), trade->payNo);
        o.insert(QStringLiteral("send_pay_date"), beijingTime(trade->paidAt));
    }
    return deliver(Channel::Alipay, call.endpoint, call.responder, alipayAnswer(call.method, o));
}

void SimServer::alipayClose(const AlipayCall &call)
{
    switch (m_state.close(Channel::Alipay, call.outTradeNo)) {
    case SimState::CloseOutcome::Closed:
    case SimState::CloseOutcome::AlreadyClosed: {
        QJsonObject o = alipaySuccess();
        o.insert(QStringLiteral("out_trade_no"), call.outTradeNo);
        return deliver(Channel::Alipay, call.endpoint, call.responder, alipayAnswer(call.method, o));
    }
    case SimState::CloseOutcome::NotFound:
        return alipayBusinessError(call, QStringLiteral("ACQ.TRADE_NOT_EXIST"), QStringLiteral("trade does not exist"));
    case SimState::CloseOutcome::Paid:
        return alipayBusinessError(call, QStringLiteral("ACQ.TRADE_STATUS_ERROR"),
                                   QStringLiteral("trade already paid"));
    }
}

void SimServer::alipayRefuse(const AlipayCall &call, const QString &code, const QString &msg, const QString &subCode,
                             const QString &subMsg)
{
    deliver(
        Channel::Alipay, call.endpoint, call.responder,
        alipayAnswer(call.method.isEmpty() ? QByteArray("error") : call.method, {{QStringLiteral("code"), code},
                                                                                 {QStringLiteral("msg"), msg},
                                                                                 {QStringLiteral("sub_code"), subCode},
                                                                                 {QStringLiteral("sub_msg"), subMsg}}));
}

void SimServer::alipayBusinessError(const AlipayCall &call, const QString &subCode, const QString &subMsg)
{
    alipayRefuse(call, QStringLiteral("40004"), QStringLiteral("Business Failed"), subCode, subMsg);
}

void SimServer::alipayRefund(const AlipayCall &call)
{
    const QString outTradeNo = call.biz.value(u"out_trade_no").toString();
    const QString tradeNo = call.biz.value(u"trade_no").toString();
    if (outTradeNo.isEmpty() && tradeNo.isEmpty())
        return alipayBusinessError(call, QStringLiteral("ACQ.INVALID_PARAMETER"),
                                   QStringLiteral("out_trade_no or trade_no is required"));
    // Alipay: without out_request_no the refund is named by the trade's out_trade_no.
    QString outRequestNo = call.biz.value(u"out_request_no").toString();
    if (outRequestNo.isEmpty())
        outRequestNo = outTradeNo;
    if (call.method == "alipay.trade.fastpay.refund.query")
        return alipayRefundQuery(call, outTradeNo, tradeNo, outRequestNo);
    alipayRefundCreate(call, outTradeNo, tradeNo, outRequestNo);
}

void SimServer::alipayRefundQuery(const AlipayCall &call, const QString &outTradeNo, const QString &tradeNo,
                                  const QString &outRequestNo)
{
    const auto refund = m_state.findRefund(Channel::Alipay, outRequestNo);
    if (!refund || (!outTradeNo.isEmpty() && refund->outTradeNo != outTradeNo)
        || (!tradeNo.isEmpty() && refund->payNo != tradeNo))
        return alipaySucceed(call, {}); // Alipay's way of saying "no such refund"
    return alipaySucceed(call, {{QStringLiteral("trade_no"), refund->payNo},
                                {QStringLiteral("out_trade_no"), refund->outTradeNo},
                                {QStringLiteral("out_request_no"), refund->outRefundNo},
                                {QStringLiteral("total_amount"), formatAmountFen(refund->totalFen)},
                                {QStringLiteral("refund_amount"), formatAmountFen(refund->amountFen)},
                                {QStringLiteral("refund_status"), QStringLiteral("REFUND_SUCCESS")},
                                {QStringLiteral("refund_reason"), refund->reason},
                                {QStringLiteral("gmt_refund_pay"), beijingTime(refund->finishedAt)}});
}

void SimServer::alipayRefundCreate(const AlipayCall &call, const QString &outTradeNo, const QString &tradeNo,
                                   const QString &outRequestNo)
{
    m_state.countRefundCall(Channel::Alipay);
    const auto fen = parseAmountFen(call.biz.value(u"refund_amount").toString());
    if (!fen)
        return alipayBusinessError(call, QStringLiteral("ACQ.INVALID_PARAMETER"),
                                   QStringLiteral("refund_amount must be a positive yuan amount"));
    if (m_state.faults(Channel::Alipay).refundFail && !m_state.findRefund(Channel::Alipay, outRequestNo))
        return alipayBusinessError(call, QStringLiteral("ACQ.SELLER_BALANCE_NOT_ENOUGH"),
                                   QStringLiteral("simulated refund failure: seller balance not enough"));
    SimRefund proposed;
    proposed.channel = Channel::Alipay;
    proposed.outRefundNo = outRequestNo;
    proposed.outTradeNo = outTradeNo;
    proposed.payNo = tradeNo;
    proposed.amountFen = *fen;
    proposed.reason = call.biz.value(u"refund_reason").toString();
    proposed.notifyUrl = QString::fromUtf8(param(call.params, "notify_url"));
    SimRefund refund;
    bool fundChange = false;
    switch (m_state.refund(proposed, &refund)) {
    case SimState::RefundOutcome::Created:
        // Alipay refunds synchronously: the money is back when it answers.
        m_state.finishRefund(Channel::Alipay, refund.outRefundNo, false);
        refund = *m_state.findRefund(Channel::Alipay, refund.outRefundNo);
        fundChange = true;
        break;
    case SimState::RefundOutcome::Existing: break;
    case SimState::RefundOutcome::TradeNotFound:
        return alipayBusinessError(call, QStringLiteral("ACQ.TRADE_NOT_EXIST"), QStringLiteral("trade does not exist"));
    case SimState::RefundOutcome::NotPaid:
        return alipayBusinessError(call, QStringLiteral("ACQ.TRADE_STATUS_ERROR"), QStringLiteral("trade is not paid"));
    case SimState::RefundOutcome::OverRefund:
    case SimState::RefundOutcome::TotalDiffers:
        return alipayBusinessError(call, QStringLiteral("ACQ.REFUND_AMT_NOT_EQUAL_TOTAL"),
                                   QStringLiteral("refund amount exceeds the refundable amount"));
    case SimState::RefundOutcome::RefundNoReused:
        return alipayBusinessError(call, QStringLiteral("ACQ.CONTEXT_INCONSISTENT"),
                                   QStringLiteral("out_request_no used with other parameters"));
    }
    const auto trade = m_state.find(Channel::Alipay, refund.outTradeNo);
    alipaySucceed(call, {{QStringLiteral("trade_no"), refund.payNo},
                         {QStringLiteral("out_trade_no"), refund.outTradeNo},
                         {QStringLiteral("buyer_logon_id"), QStringLiteral("sim***@example.com")},
                         {QStringLiteral("fund_change"), fundChange ? QStringLiteral("Y") : QStringLiteral("N")},
                         {QStringLiteral("refund_fee"), formatAmountFen(trade ? trade->refundedFen : refund.amountFen)},
                         {QStringLiteral("gmt_refund_pay"), beijingTime(refund.finishedAt)}});
}

void SimServer::alipaySucceed(const AlipayCall &call, const QJsonObject &fields)
{
    QJsonObject o = alipaySuccess();
    for (auto it = fields.begin(); it != fields.end(); ++it)
        o.insert(it.key(), it.value());
    deliver(Channel::Alipay, call.endpoint, call.responder, alipayAnswer(call.method, o));
}

} // namespace payonce::sim
