#include "simjson_p.h"

#include "crypto/securerandom.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace payonce::sim {

QByteArray compact(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QString randomToken(int length)
{
    auto nonce = crypto::nonceString(length);
    return nonce ? *nonce : QString(length, u'0');
}

platform::alipay::Params parseForm(const QByteArray &text)
{
    platform::alipay::Params params;
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

QByteArray param(const platform::alipay::Params &params, QByteArrayView name)
{
    for (const auto &p : params) {
        if (p.first == name)
            return p.second;
    }
    return {};
}

namespace {

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

} // namespace

QString beijingTime(const QDateTime &t)
{
    return t.toOffsetFromUtc(8 * 3600).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

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

} // namespace payonce::sim
