#include "callbackopsroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/callback/callbackpipeline.h"
#include "core/orders/setupservice.h"
#include "core/ports/auditwriter.h"
#include "core/ports/callbackhistory.h"

#include <QJsonArray>

namespace payonce::http {

namespace {

QJsonValue orNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

QJsonObject toJson(const core::DeliveryView &d)
{
    return QJsonObject{
        {QStringLiteral("id"), d.id},
        {QStringLiteral("received_at"), isoTime(d.receivedAtMs)},
        {QStringLiteral("channel"), d.channel},
        {QStringLiteral("pay_no"), orNull(d.payNo)},
        {QStringLiteral("order_no"), orNull(d.orderNo)},
        {QStringLiteral("verified"), d.verified},
        {QStringLiteral("layer"), d.layer},
        {QStringLiteral("http_status"), d.httpStatus},
        {QStringLiteral("outcome"), orNull(d.outcome)},
        {QStringLiteral("agent_id"), orNull(d.agentId)},
    };
}

QJsonObject toJson(const core::LogRowView &row)
{
    return QJsonObject{
        {QStringLiteral("channel"), row.channel},
        {QStringLiteral("pay_no"), row.payNo},
        {QStringLiteral("order_no"), row.orderNo},
        {QStringLiteral("amount_fen"), row.amountFen},
        {QStringLiteral("status"), core::logRowStatusName(row.status)},
        {QStringLiteral("outcome"), orNull(row.outcome)},
        {QStringLiteral("delivery_id"), row.deliveryId ? QJsonValue(*row.deliveryId) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("created_at"), isoTime(row.createdAtMs)},
        {QStringLiteral("processed_at"), orNull(isoTime(row.processedAtMs))},
    };
}

HttpReply listCallbacks(const HttpRequest &request, core::CallbackHistory &history)
{
    const auto payNo = textParameter(request, QStringLiteral("pay_no"), 64);
    if (!payNo)
        return errorReply(payNo.error());
    const auto orderNo = textParameter(request, QStringLiteral("order_no"), 64);
    if (!orderNo)
        return errorReply(orderNo.error());
    if (payNo->isEmpty() == orderNo->isEmpty())
        return errorReply(QStringLiteral("invalid_request"), QStringLiteral("give exactly one of pay_no and order_no"));
    const auto limit = limitParameter(request);
    if (!limit)
        return errorReply(limit.error());
    auto deliveries = history.deliveries(payNo.value(), orderNo.value(), limit.value());
    if (!deliveries)
        return errorReply(deliveries.error());
    auto log = history.logRows(payNo.value(), orderNo.value());
    if (!log)
        return errorReply(log.error());
    QJsonArray deliveryList;
    for (const core::DeliveryView &d : deliveries.value())
        deliveryList.append(toJson(d));
    QJsonArray logList;
    for (const core::LogRowView &row : log.value())
        logList.append(toJson(row));
    return HttpReply::ok(QJsonObject{{QStringLiteral("deliveries"), deliveryList}, {QStringLiteral("log"), logList}});
}

HttpReply replayCallback(const HttpRequest &request, core::CallbackPipeline &pipeline, core::AuditWriter &audit)
{
    const auto channel = core::channelFromName(request.pathArgument(QStringLiteral("channel")));
    if (!channel)
        return errorReply(QStringLiteral("invalid_request"),
                          QStringLiteral("channel must be \"wechat\" or \"alipay\""));
    const QString payNo = request.pathArgument(QStringLiteral("pay_no"));
    if (!core::isValidBusinessId(payNo))
        return errorReply(QStringLiteral("invalid_request"), QStringLiteral("pay_no must be 1-64 of [A-Za-z0-9_-]"));
    const auto dryRun = choiceParameter(request, QStringLiteral("dry_run"),
                                        {QStringLiteral("true"), QStringLiteral("false")});
    if (!dryRun)
        return errorReply(dryRun.error());
    const auto body = parseActionBody(request.body);
    if (!body)
        return errorReply(body.error());
    const bool dry = dryRun.value() == u"true";

    const QString target = QStringLiteral("callback:%1:%2").arg(core::channelName(*channel), payNo);
    // The answer as the audit row and the reply carry it.
    auto answerOf = [&](const core::CallbackOutcome &outcome, qint64 deliveryId) {
        return QJsonObject{
            {QStringLiteral("outcome"), core::callbackOutcomeName(outcome.code)},
            {QStringLiteral("layer"), layerName(outcome.layer)},
            {QStringLiteral("note"), outcome.note},
            {QStringLiteral("message"), outcome.message},
            {QStringLiteral("pay_no"), payNo},
            {QStringLiteral("order_no"), orNull(outcome.orderNo)},
            {QStringLiteral("delivery_id"), deliveryId},
            {QStringLiteral("dry_run"), dry},
        };
    };
    // A replay that settles the order writes its audit row inside that transaction (both
    // or neither); one that commits nothing of its own is audited afterwards.
    bool auditedInTransaction = false;
    std::optional<core::Error> auditFailure;
    auto replayed = pipeline.replay(
        *channel, payNo, dry, [&](const core::CallbackOutcome &settled) -> core::Result<void> {
            QJsonObject inTransaction = answerOf(settled, 0);
            inTransaction.remove(QStringLiteral("delivery_id"));
            auto audited = audit.append({actorOf(request), QStringLiteral("callback.replay"), target, QString(),
                                         compactJson(inTransaction), body->reason, request.traceId});
            if (!audited) {
                auditFailure = audited.error();
                return audited.error();
            }
            auditedInTransaction = true;
            return {};
        });
    if (!replayed)
        return errorReply(replayed.error());
    if (auditFailure)
        return errorReply(*auditFailure);
    const core::CallbackOutcome &outcome = replayed->outcome;
    QJsonObject answer = answerOf(outcome, replayed->deliveryId);
    if (dry) {
        answer.insert(QStringLiteral("changes"), QJsonArray::fromStringList(replayed->changes));
    } else if (!auditedInTransaction) {
        auto audited = audit.append({actorOf(request), QStringLiteral("callback.replay"), target, QString(),
                                     compactJson(answer), body->reason, request.traceId});
        if (!audited)
            return errorReply(audited.error());
    }
    HttpReply reply = HttpReply::ok(answer);
    reply.setLayer(layerName(outcome.layer).toLatin1());
    return reply;
}

} // namespace

void registerCallbackOpsRoutes(HttpServer &server, core::CallbackHistory &history, core::CallbackPipeline &pipeline,
                               core::AuditWriter &audit)
{
    server.route(Method::Get, QStringLiteral("/api/v1/callbacks"), Role::Viewer,
                 [&](const HttpRequest &request) { return listCallbacks(request, history); });
    server.route(Method::Post, QStringLiteral("/api/v1/callbacks/<channel>/<pay_no>/replay"), Role::Operator,
                 [&](const HttpRequest &request) { return replayCallback(request, pipeline, audit); });
}

} // namespace payonce::http
