#include "simserver.h"

#include "crypto/securerandom.h"
#include "gateway/alipaysignature.h"
#include "gateway/wechatsignature.h"
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
using namespace payonce::gateway;

namespace {

constexpr qint64 kRequestWindowSeconds = 300;

QByteArray compact(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QString randomToken(int length)
{
    auto nonce = crypto::nonceString(length);
    return nonce ? *nonce : QString(length, u'0');
}

// "a=b&c=d" form decoding: '+' is a space, then percent-decoding.
alipay::Params parseForm(const QByteArray &text)
{
    alipay::Params params;
    const QList<QByteArray> parts = text.split('&');
    for (const QByteArray &part : parts) {
        if (part.isEmpty())
            continue;
        const qsizetype eq = part.indexOf('=');
        QByteArray key = eq < 0 ? part : part.left(eq);
        QByteArray value = eq < 0 ? QByteArray() : part.mid(eq + 1);
        key.replace('+', ' ');
        value.replace('+', ' ');
        params.append(qMakePair(QByteArray::fromPercentEncoding(key), QByteArray::fromPercentEncoding(value)));
    }
    return params;
}

QByteArray param(const alipay::Params &params, QByteArrayView name)
{
    for (const auto &p : params) {
        if (p.first == name)
            return p.second;
    }
    return {};
}

QJsonObject refundJson(const SimRefund &r)
{
    QJsonObject o{{QStringLiteral("out_refund_no"), r.outRefundNo},
                  {QStringLiteral("refund_id"), r.refundId},
                  {QStringLiteral("amount_fen"), r.amountFen},
                  {QStringLiteral("state"), refundStateName(r.state)},
                  {QStringLiteral("reason"), r.reason},
                  {QStringLiteral("notify_url"), r.notifyUrl},
                  {QStringLiteral("created_at"), r.createdAt.toString(Qt::ISODateWithMs)}};
    if (r.finishedAt.isValid())
        o.insert(QStringLiteral("finished_at"), r.finishedAt.toString(Qt::ISODateWithMs));
    return o;
}

QString beijingTime(const QDateTime &t)
{
    return t.toOffsetFromUtc(8 * 3600).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

// The refund object of WeChat Pay's refund and refund-query answers.
QJsonObject wechatRefundJson(const SimRefund &r)
{
    QJsonObject o{{QStringLiteral("refund_id"), r.refundId},
                  {QStringLiteral("out_refund_no"), r.outRefundNo},
                  {QStringLiteral("transaction_id"), r.payNo},
                  {QStringLiteral("out_trade_no"), r.outTradeNo},
                  {QStringLiteral("channel"), QStringLiteral("ORIGINAL")},
                  {QStringLiteral("user_received_account"), QStringLiteral("\u652f\u4ed8\u7528\u6237\u96f6\u94b1")},
                  {QStringLiteral("create_time"), r.createdAt.toOffsetFromUtc(8 * 3600).toString(Qt::ISODate)},
                  {QStringLiteral("status"), refundStateName(r.state)},
                  {QStringLiteral("funds_account"), QStringLiteral("AVAILABLE")},
                  {QStringLiteral("amount"), QJsonObject{{QStringLiteral("total"), r.totalFen},
                                                         {QStringLiteral("refund"), r.amountFen},
                                                         {QStringLiteral("payer_total"), r.totalFen},
                                                         {QStringLiteral("payer_refund"), r.amountFen},
                                                         {QStringLiteral("settlement_total"), r.totalFen},
                                                         {QStringLiteral("settlement_refund"), r.amountFen},
                                                         {QStringLiteral("discount_refund"), 0},
                                                         {QStringLiteral("currency"), QStringLiteral("CNY")}}}};
    if (r.state == SimRefund::State::Success)
        o.insert(QStringLiteral("success_time"), r.finishedAt.toOffsetFromUtc(8 * 3600).toString(Qt::ISODate));
    return o;
}

QJsonObject tradeJson(const SimTrade &t, const QList<SimRefund> &refunds)
{
    QJsonObject o{{QStringLiteral("channel"), core::channelName(t.channel)},
                  {QStringLiteral("out_trade_no"), t.outTradeNo},
                  {QStringLiteral("amount_fen"), t.amountFen},
                  {QStringLiteral("state"), tradeStateName(t.state)},
                  {QStringLiteral("code_url"), t.codeUrl},
                  {QStringLiteral("notify_url"), t.notifyUrl},
                  {QStringLiteral("traceparent"), QString::fromLatin1(t.traceParent)},
                  {QStringLiteral("created_at"), t.createdAt.toString(Qt::ISODateWithMs)}};
    if (!t.payNo.isEmpty()) {
        o.insert(QStringLiteral("pay_no"), t.payNo);
        o.insert(QStringLiteral("paid_at"), t.paidAt.toString(Qt::ISODateWithMs));
    }
    QJsonArray list;
    for (const SimRefund &r : refunds)
        list.append(refundJson(r));
    o.insert(QStringLiteral("refunded_fen"), t.refundedFen);
    o.insert(QStringLiteral("refunds"), list);
    return o;
}

QJsonObject faultsJson(const SimFaults &f)
{
    return {{QStringLiteral("latency_ms"), f.latencyMs},
            {QStringLiteral("error_rate"), f.errorRate},
            {QStringLiteral("error_status"), f.errorStatus},
            {QStringLiteral("hang"), f.hang},
            {QStringLiteral("tamper_responses"), f.tamperResponses},
            {QStringLiteral("replay_last"), f.replayLast},
            {QStringLiteral("duplicate"), f.duplicate},
            {QStringLiteral("refund_fail"), f.refundFail}};
}

} // namespace

SimServer::SimServer(SimOptions options, crypto::PrivateKey platformKey, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_platformKey(std::move(platformKey)),
      m_notifier(m_options, m_platformKey, &m_state)
{
    auto pem = m_platformKey.publicKey().toPem();
    if (pem)
        m_platformPublicPem = *pem;
    routeWeChat();
    routeAlipay();
    routeControl();
    routeNotifications();
}

SimServer::~SimServer()
{
    shutdown();
}

quint16 SimServer::listen()
{
    return m_server.listen(m_options.address, m_options.port);
}

void SimServer::shutdown()
{
    m_parked.clear();
    m_notifier.reset();
}

// ---- delivery and faults -------------------------------------------------------------

void SimServer::write(QHttpServerResponder &responder, const Answer &answer)
{
    responder.writeStatusLine(static_cast<QHttpServerResponder::StatusCode>(answer.status));
    for (const auto &[name, value] : answer.headers)
        responder.writeHeader(name, value);
    responder.writeHeader("Content-Length", QByteArray::number(answer.body.size()));
    responder.writeBody(answer.body);
}

bool SimServer::injectError(Channel channel, const QString &endpoint, const ResponderPtr &responder)
{
    m_state.countRequest(endpoint);
    const SimFaults faults = m_state.faults(channel);
    if (faults.errorRate <= 0.0 || QRandomGenerator::global()->generateDouble() >= faults.errorRate)
        return false;
    Answer answer;
    if (channel == Channel::WeChat) {
        answer = wechatError(faults.errorStatus, QStringLiteral("SYSTEM_ERROR"),
                             QStringLiteral("simulated system error"));
    } else if (faults.errorStatus == 200) {
        // Alipay reports its own failures inside a 200: code 20000.
        const QByteArray method = endpoint.toLatin1(); // Alipay endpoints are named by their method
        answer = alipayAnswer(method, {{QStringLiteral("code"), QStringLiteral("20000")},
                                       {QStringLiteral("msg"), QStringLiteral("Service Currently Unavailable")},
                                       {QStringLiteral("sub_code"), QStringLiteral("isp.unknow-error")},
                                       {QStringLiteral("sub_msg"), QStringLiteral("simulated system error")}});
    } else {
        answer.status = faults.errorStatus;
        answer.headers = {{"Content-Type", "text/plain"}};
        answer.body = "simulated error";
    }
    deliver(channel, endpoint, responder, std::move(answer));
    return true;
}

void SimServer::deliver(Channel channel, const QString &endpoint, const ResponderPtr &responder, Answer answer)
{
    const SimFaults faults = m_state.faults(channel);
    if (faults.replayLast && m_lastAnswers.contains(endpoint))
        answer = m_lastAnswers.value(endpoint);
    else
        m_lastAnswers.insert(endpoint, answer);

    QTcpSocket *socket = responder->socket();
    if (faults.hang) {
        // Never answer; forget the responder when the client gives up.
        m_parked.insert(socket, responder);
        connect(socket, &QAbstractSocket::disconnected, this, [this, socket] { m_parked.remove(socket); });
        connect(socket, &QObject::destroyed, this, [this, socket] { m_parked.remove(socket); });
        return;
    }
    if (faults.latencyMs > 0) {
        // Bound to the socket: if the client disconnects first, nothing is written.
        QTimer::singleShot(faults.latencyMs, socket, [responder, answer] { write(*responder, answer); });
        return;
    }
    write(*responder, answer);
}

// ---- WeChat Pay v3 -------------------------------------------------------------------

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

// ---- Alipay --------------------------------------------------------------------------

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
    alipay::Params params = parseForm(request.body());
    params += parseForm(request.url().query(QUrl::FullyEncoded).toLatin1());
    const QByteArray method = param(params, "method");
    const QString endpoint = method.isEmpty() ? QStringLiteral("alipay.unknown") : QString::fromLatin1(method);
    if (injectError(Channel::Alipay, endpoint, responder))
        return;
    auto refuse = [&](const QString &code, const QString &msg, const QString &subCode, const QString &subMsg) {
        deliver(Channel::Alipay, endpoint, responder,
                alipayAnswer(method.isEmpty() ? QByteArray("error") : method, {{QStringLiteral("code"), code},
                                                                               {QStringLiteral("msg"), msg},
                                                                               {QStringLiteral("sub_code"), subCode},
                                                                               {QStringLiteral("sub_msg"), subMsg}}));
    };
    if (!m_options.alipayAppId.isEmpty() && param(params, "app_id") != m_options.alipayAppId.toUtf8()) {
        m_state.countSignatureFailure(Channel::Alipay);
        return refuse(QStringLiteral("40002"), QStringLiteral("Invalid Arguments"),
                      QStringLiteral("isv.invalid-app-id"), QStringLiteral("unknown app_id"));
    }
    if (param(params, "sign_type") != "RSA2" || !alipay::verifyParams(m_options.alipayAppKey, params)) {
        m_state.countSignatureFailure(Channel::Alipay);
        return refuse(QStringLiteral("40002"), QStringLiteral("Invalid Arguments"),
                      QStringLiteral("isv.invalid-signature"), QStringLiteral("the request signature does not verify"));
    }
    const QJsonObject biz = QJsonDocument::fromJson(param(params, "biz_content")).object();
    if (method == "alipay.trade.refund" || method == "alipay.trade.fastpay.refund.query")
        return alipayRefund(method, biz, param(params, "notify_url"), responder);
    const QString outTradeNo = biz.value(u"out_trade_no").toString();
    if (outTradeNo.isEmpty())
        return refuse(QStringLiteral("40002"), QStringLiteral("Invalid Arguments"),
                      QStringLiteral("isv.missing-out-trade-no"),
                      QStringLiteral("biz_content.out_trade_no is required"));
    const QJsonObject success{{QStringLiteral("code"), QStringLiteral("10000")},
                              {QStringLiteral("msg"), QStringLiteral("Success")}};
    auto business = [&](const QString &subCode, const QString &subMsg) {
        refuse(QStringLiteral("40004"), QStringLiteral("Business Failed"), subCode, subMsg);
    };

    if (method == "alipay.trade.precreate") {
        const auto fen = parseAmountFen(biz.value(u"total_amount").toString());
        if (!fen || biz.value(u"subject").toString().isEmpty())
            return business(QStringLiteral("ACQ.INVALID_PARAMETER"),
                            QStringLiteral("total_amount and subject are required"));
        SimTrade proposed;
        proposed.channel = Channel::Alipay;
        proposed.outTradeNo = outTradeNo;
        proposed.amountFen = *fen;
        proposed.description = biz.value(u"subject").toString();
        proposed.body = biz.value(u"body").toString();
        proposed.notifyUrl = QString::fromUtf8(param(params, "notify_url"));
        proposed.appId = QString::fromUtf8(param(params, "app_id"));
        proposed.traceParent = request.value(QByteArrayLiteral("traceparent"));
        proposed.codeUrl = QStringLiteral("https://qr.alipay.com/") + randomToken(20).toLower();
        SimTrade trade;
        switch (m_state.create(proposed, &trade)) {
        case SimState::CreateOutcome::Created:
        case SimState::CreateOutcome::Existing: {
            QJsonObject o = success;
            o.insert(QStringLiteral("out_trade_no"), trade.outTradeNo);
            o.insert(QStringLiteral("qr_code"), trade.codeUrl);
            return deliver(Channel::Alipay, endpoint, responder, alipayAnswer(method, o));
        }
        case SimState::CreateOutcome::AlreadyPaid:
            return business(QStringLiteral("ACQ.TRADE_HAS_SUCCESS"), QStringLiteral("trade already paid"));
        case SimState::CreateOutcome::AlreadyClosed:
            return business(QStringLiteral("ACQ.TRADE_HAS_CLOSE"), QStringLiteral("trade closed"));
        case SimState::CreateOutcome::AmountDiffers:
            return business(QStringLiteral("ACQ.CONTEXT_INCONSISTENT"),
                            QStringLiteral("out_trade_no used with other parameters"));
        }
        return;
    }
    if (method == "alipay.trade.query") {
        const auto trade = m_state.find(Channel::Alipay, outTradeNo);
        if (!trade)
            return business(QStringLiteral("ACQ.TRADE_NOT_EXIST"), QStringLiteral("trade does not exist"));
        QJsonObject o = success;
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
        return deliver(Channel::Alipay, endpoint, responder, alipayAnswer(method, o));
    }
    if (method == "alipay.trade.close") {
        switch (m_state.close(Channel::Alipay, outTradeNo)) {
        case SimState::CloseOutcome::Closed:
        case SimState::CloseOutcome::AlreadyClosed: {
            QJsonObject o = success;
            o.insert(QStringLiteral("out_trade_no"), outTradeNo);
            return deliver(Channel::Alipay, endpoint, responder, alipayAnswer(method, o));
        }
        case SimState::CloseOutcome::NotFound:
            return business(QStringLiteral("ACQ.TRADE_NOT_EXIST"), QStringLiteral("trade does not exist"));
        case SimState::CloseOutcome::Paid:
            return business(QStringLiteral("ACQ.TRADE_STATUS_ERROR"), QStringLiteral("trade already paid"));
        }
        return;
    }
    refuse(QStringLiteral("40002"), QStringLiteral("Invalid Arguments"), QStringLiteral("isv.invalid-method"),
           QStringLiteral("method not simulated"));
}

void SimServer::alipayRefund(const QByteArray &method, const QJsonObject &biz, const QByteArray &notifyUrl,
                             const ResponderPtr &responder)
{
    const QString endpoint = QString::fromLatin1(method);
    auto answer = [&](const QJsonObject &fields) {
        QJsonObject o{{QStringLiteral("code"), QStringLiteral("10000")},
                      {QStringLiteral("msg"), QStringLiteral("Success")}};
        for (auto it = fields.begin(); it != fields.end(); ++it)
            o.insert(it.key(), it.value());
        deliver(Channel::Alipay, endpoint, responder, alipayAnswer(method, o));
    };
    auto business = [&](const QString &subCode, const QString &subMsg) {
        deliver(Channel::Alipay, endpoint, responder,
                alipayAnswer(method, {{QStringLiteral("code"), QStringLiteral("40004")},
                                      {QStringLiteral("msg"), QStringLiteral("Business Failed")},
                                      {QStringLiteral("sub_code"), subCode},
                                      {QStringLiteral("sub_msg"), subMsg}}));
    };
    const QString outTradeNo = biz.value(u"out_trade_no").toString();
    const QString tradeNo = biz.value(u"trade_no").toString();
    if (outTradeNo.isEmpty() && tradeNo.isEmpty())
        return business(QStringLiteral("ACQ.INVALID_PARAMETER"),
                        QStringLiteral("out_trade_no or trade_no is required"));
    // Alipay: without out_request_no the refund is named by the trade's out_trade_no.
    QString outRequestNo = biz.value(u"out_request_no").toString();
    if (outRequestNo.isEmpty())
        outRequestNo = outTradeNo;

    if (method == "alipay.trade.fastpay.refund.query") {
        const auto refund = m_state.findRefund(Channel::Alipay, outRequestNo);
        if (!refund || (!outTradeNo.isEmpty() && refund->outTradeNo != outTradeNo)
            || (!tradeNo.isEmpty() && refund->payNo != tradeNo))
            return answer({}); // Alipay's way of saying "no such refund"
        return answer({{QStringLiteral("trade_no"), refund->payNo},
                       {QStringLiteral("out_trade_no"), refund->outTradeNo},
                       {QStringLiteral("out_request_no"), refund->outRefundNo},
                       {QStringLiteral("total_amount"), formatAmountFen(refund->totalFen)},
                       {QStringLiteral("refund_amount"), formatAmountFen(refund->amountFen)},
                       {QStringLiteral("refund_status"), QStringLiteral("REFUND_SUCCESS")},
                       {QStringLiteral("refund_reason"), refund->reason},
                       {QStringLiteral("gmt_refund_pay"), beijingTime(refund->finishedAt)}});
    }

    m_state.countRefundCall(Channel::Alipay);
    const auto fen = parseAmountFen(biz.value(u"refund_amount").toString());
    if (!fen)
        return business(QStringLiteral("ACQ.INVALID_PARAMETER"),
                        QStringLiteral("refund_amount must be a positive yuan amount"));
    if (m_state.faults(Channel::Alipay).refundFail && !m_state.findRefund(Channel::Alipay, outRequestNo))
        return business(QStringLiteral("ACQ.SELLER_BALANCE_NOT_ENOUGH"),
                        QStringLiteral("simulated refund failure: seller balance not enough"));
    SimRefund proposed;
    proposed.channel = Channel::Alipay;
    proposed.outRefundNo = outRequestNo;
    proposed.outTradeNo = outTradeNo;
    proposed.payNo = tradeNo;
    proposed.amountFen = *fen;
    proposed.reason = biz.value(u"refund_reason").toString();
    proposed.notifyUrl = QString::fromUtf8(notifyUrl);
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
        return business(QStringLiteral("ACQ.TRADE_NOT_EXIST"), QStringLiteral("trade does not exist"));
    case SimState::RefundOutcome::NotPaid:
        return business(QStringLiteral("ACQ.TRADE_STATUS_ERROR"), QStringLiteral("trade is not paid"));
    case SimState::RefundOutcome::OverRefund:
    case SimState::RefundOutcome::TotalDiffers:
        return business(QStringLiteral("ACQ.REFUND_AMT_NOT_EQUAL_TOTAL"),
                        QStringLiteral("refund amount exceeds the refundable amount"));
    case SimState::RefundOutcome::RefundNoReused:
        return business(QStringLiteral("ACQ.CONTEXT_INCONSISTENT"),
                        QStringLiteral("out_request_no used with other parameters"));
    }
    const auto trade = m_state.find(Channel::Alipay, refund.outTradeNo);
    answer({{QStringLiteral("trade_no"), refund.payNo},
            {QStringLiteral("out_trade_no"), refund.outTradeNo},
            {QStringLiteral("buyer_logon_id"), QStringLiteral("sim***@example.com")},
            {QStringLiteral("fund_change"), fundChange ? QStringLiteral("Y") : QStringLiteral("N")},
            {QStringLiteral("refund_fee"), formatAmountFen(trade ? trade->refundedFen : refund.amountFen)},
            {QStringLiteral("gmt_refund_pay"), beijingTime(refund.finishedAt)}});
}

// ---- control -------------------------------------------------------------------------

bool SimServer::controlAllowed(const QHttpServerRequest &request, const ResponderPtr &responder)
{
    if (request.remoteAddress().isLoopback())
        return true;
    responder->write(QJsonDocument(QJsonObject{
                         {QStringLiteral("error"), QStringLiteral("the control API answers loopback clients only")}}),
                     QHttpServerResponder::StatusCode::Forbidden);
    return false;
}

void SimServer::routeControl()
{
    auto json = [](const ResponderPtr &r, const QJsonObject &o, int status = 200) {
        r->write(QJsonDocument(o), static_cast<QHttpServerResponder::StatusCode>(status));
    };
    auto error = [json](const ResponderPtr &r, int status, const QString &message) {
        json(r, {{QStringLiteral("error"), message}}, status);
    };

    m_server.route(QStringLiteral("/sim/pay"), QHttpServerRequest::Method::Post,
                   [this, json, error](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
                       const auto channel = core::channelFromName(body.value(u"channel").toString());
                       const QString outTradeNo = body.value(u"out_trade_no").toString();
                       if (!channel || outTradeNo.isEmpty())
                           return error(r, 400,
                                        QStringLiteral("channel (wechat|alipay) and out_trade_no are required"));
                       SimTrade trade;
                       switch (m_state.pay(*channel, outTradeNo, &trade)) {
                       case SimState::PayOutcome::Paid:
                       case SimState::PayOutcome::AlreadyPaid:
                           return json(r, tradeJson(trade, m_state.refundsOf(trade)));
                       case SimState::PayOutcome::NotFound: return error(r, 404, QStringLiteral("no such trade"));
                       case SimState::PayOutcome::Closed: return error(r, 409, QStringLiteral("the trade is closed"));
                       }
                   });

    m_server.route(
        QStringLiteral("/sim/faults"), QHttpServerRequest::Method::Post,
        [this, json, error](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
            if (!controlAllowed(request, r))
                return;
            const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
            const QString name = body.value(u"channel").toString(QStringLiteral("all"));
            QList<Channel> channels;
            if (name == u"all")
                channels = {Channel::WeChat, Channel::Alipay};
            else if (auto c = core::channelFromName(name))
                channels = {*c};
            else
                return error(r, 400, QStringLiteral("channel must be wechat, alipay or all"));
            SimFaults f;
            f.latencyMs = body.value(u"latency_ms").toInt(0);
            f.errorRate = body.value(u"error_rate").toDouble(0.0);
            f.errorStatus = body.value(u"error_status").toInt(500);
            f.hang = body.value(u"hang").toBool(false);
            f.tamperResponses = body.value(u"tamper_responses").toBool(false);
            f.replayLast = body.value(u"replay_last").toBool(false);
            f.duplicate = body.value(u"duplicate").toInt(1);
            f.refundFail = body.value(u"refund_fail").toBool(false);
            if (f.latencyMs < 0 || f.errorRate < 0.0 || f.errorRate > 1.0 || f.errorStatus < 200 || f.errorStatus > 599
                || f.duplicate < 1 || f.duplicate > 1000)
                return error(
                    r, 400,
                    QStringLiteral(
                        "latency_ms >= 0, error_rate in [0,1], error_status in 200..599, duplicate in 1..1000"));
            QJsonObject out;
            for (Channel c : channels) {
                m_state.setFaults(c, f);
                out.insert(core::channelName(c), faultsJson(f));
            }
            json(r, out);
        });

    m_server.route(QStringLiteral("/sim/faults"), QHttpServerRequest::Method::Get,
                   [this, json](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       QJsonObject out;
                       for (Channel c : core::allChannels)
                           out.insert(core::channelName(c), faultsJson(m_state.faults(c)));
                       json(r, out);
                   });

    m_server.route(QStringLiteral("/sim/stats"), QHttpServerRequest::Method::Get,
                   [this, json](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       QJsonObject created, failures, requests, refundCalls, refundsCreated, refundedFen;
                       for (Channel c : core::allChannels) {
                           created.insert(core::channelName(c), m_state.ordersCreated(c));
                           failures.insert(core::channelName(c), m_state.signatureFailures(c));
                           refundCalls.insert(core::channelName(c), m_state.refundCalls(c));
                           refundsCreated.insert(core::channelName(c), m_state.refundsCreated(c));
                           refundedFen.insert(core::channelName(c), m_state.refundedFen(c));
                       }
                       const auto counts = m_state.requests();
                       for (auto it = counts.cbegin(); it != counts.cend(); ++it)
                           requests.insert(it.key(), it.value());
                       json(r, {{QStringLiteral("orders_created"), created},
                                {QStringLiteral("requests"), requests},
                                {QStringLiteral("signature_failures"), failures},
                                {QStringLiteral("refund_calls"), refundCalls},
                                {QStringLiteral("refunds_created"), refundsCreated},
                                {QStringLiteral("refunded_fen"), refundedFen}});
                   });

    m_server.route(QStringLiteral("/sim/trades/<arg>"), QHttpServerRequest::Method::Get,
                   [this, json, error](const QString &outTradeNo, const QHttpServerRequest &request,
                                       QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       const QList<SimTrade> trades = m_state.findAll(outTradeNo);
                       if (trades.isEmpty())
                           return error(r, 404, QStringLiteral("no such trade"));
                       QJsonArray list;
                       for (const SimTrade &t : trades)
                           list.append(tradeJson(t, m_state.refundsOf(t)));
                       json(r, {{QStringLiteral("trades"), list}});
                   });

    m_server.route(QStringLiteral("/sim/platform-key"), QHttpServerRequest::Method::Get,
                   [this, json](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       json(r, {{QStringLiteral("serial"), m_options.platformSerial},
                                {QStringLiteral("public_key_pem"), QString::fromLatin1(m_platformPublicPem)}});
                   });

    m_server.route(QStringLiteral("/sim/reset"), QHttpServerRequest::Method::Post,
                   [this, json](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       m_state.reset();
                       m_notifier.reset();
                       m_lastAnswers.clear();
                       m_parked.clear();
                       json(r, {{QStringLiteral("reset"), true}});
                   });
}

// ---- notifications (simnotifier.h) --------------------------------------------------

void SimServer::routeNotifications()
{
    auto json = [](const ResponderPtr &r, const QJsonObject &o, int status = 200) {
        r->write(QJsonDocument(o), static_cast<QHttpServerResponder::StatusCode>(status));
    };
    auto error = [json](const ResponderPtr &r, int status, const QString &message) {
        json(r, {{QStringLiteral("error"), message}}, status);
    };
    auto listing = [this](const QString &outTradeNo) {
        return QJsonObject{{QStringLiteral("notifications"), m_notifier.notificationsJson(outTradeNo)},
                           {QStringLiteral("time_scale"), m_notifier.timeScale()},
                           {QStringLiteral("timeout_ms"), m_notifier.timeoutMs()}};
    };

    m_server.route(QStringLiteral("/sim/notifications"), QHttpServerRequest::Method::Get,
                   [this, json, listing](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       json(r, listing({}));
                   });
    m_server.route(QStringLiteral("/sim/notifications/<arg>"), QHttpServerRequest::Method::Get,
                   [this, json, listing](const QString &outTradeNo, const QHttpServerRequest &request,
                                         QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       json(r, listing(outTradeNo));
                   });
    m_server.route(QStringLiteral("/sim/notifications/<arg>/redeliver"), QHttpServerRequest::Method::Post,
                   [this, json, error, listing](const QString &outTradeNo, const QHttpServerRequest &request,
                                                QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       if (!m_notifier.redeliver(outTradeNo))
                           return error(r, 404, QStringLiteral("no notification of that out_trade_no has been sent"));
                       json(r, listing(outTradeNo));
                   });

    auto targetsJson = [this] {
        QJsonObject out;
        for (Channel c : core::allChannels)
            out.insert(core::channelName(c), QJsonArray::fromStringList(m_notifier.extraTargets(c)));
        return out;
    };
    m_server.route(
        QStringLiteral("/sim/callback-targets"), QHttpServerRequest::Method::Post,
        [this, json, error, targetsJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
            if (!controlAllowed(request, r))
                return;
            const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
            const QString name = body.value(u"channel").toString(QStringLiteral("all"));
            QList<Channel> channels;
            if (name == u"all")
                channels = {Channel::WeChat, Channel::Alipay};
            else if (auto c = core::channelFromName(name))
                channels = {*c};
            else
                return error(r, 400, QStringLiteral("channel must be wechat, alipay or all"));
            if (!body.value(u"urls").isArray())
                return error(r, 400, QStringLiteral("urls must be an array of http:// URLs"));
            QStringList urls;
            for (const QJsonValue &v : body.value(u"urls").toArray()) {
                const QUrl url(v.toString());
                if (!url.isValid() || url.scheme() != u"http" || url.host().isEmpty())
                    return error(r, 400, QStringLiteral("not an http:// URL: \"%1\"").arg(v.toString()));
                urls.append(v.toString());
            }
            for (Channel c : channels)
                m_notifier.setExtraTargets(c, urls);
            json(r, targetsJson());
        });
    m_server.route(QStringLiteral("/sim/callback-targets"), QHttpServerRequest::Method::Get,
                   [this, json, targetsJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       json(r, targetsJson());
                   });

    auto configJson = [this] {
        return QJsonObject{{QStringLiteral("time_scale"), m_notifier.timeScale()},
                           {QStringLiteral("timeout_ms"), m_notifier.timeoutMs()}};
    };
    m_server.route(
        QStringLiteral("/sim/notify-config"), QHttpServerRequest::Method::Post,
        [this, json, error, configJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
            if (!controlAllowed(request, r))
                return;
            const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
            const double scale = body.value(u"time_scale").toDouble(m_notifier.timeScale());
            const int timeout = body.value(u"timeout_ms").toInt(m_notifier.timeoutMs());
            if (!(scale > 0.0) || scale > 1000.0 || timeout < 1 || timeout > 600000)
                return error(r, 400, QStringLiteral("time_scale in (0, 1000], timeout_ms in 1..600000"));
            m_notifier.setTimeoutMs(timeout);
            m_notifier.setTimeScale(scale);
            json(r, configJson());
        });
    m_server.route(QStringLiteral("/sim/notify-config"), QHttpServerRequest::Method::Get,
                   [this, json, configJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       json(r, configJson());
                   });
}

} // namespace payonce::sim
