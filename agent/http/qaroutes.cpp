#include "qaroutes.h"

#include "errormapping.h"
#include "jsonbody.h"
#include "routesupport.h"

#include "core/ports/qarunstore.h"
#include "core/qa/scenariorunner.h"

#include <QJsonArray>

namespace payonce::http {

namespace {

QJsonObject runJson(const core::QaRun &run, bool withReport)
{
    QJsonObject json{
        {QStringLiteral("scenario_id"), run.scenarioId},
        {QStringLiteral("kind"), run.kind},
        {QStringLiteral("status"), run.status},
        {QStringLiteral("params"), storedJson(run.params)},
        {QStringLiteral("progress"), storedJson(run.progress)},
        {QStringLiteral("started_by"), run.startedBy},
        {QStringLiteral("started_at"), isoTime(run.startedAt)},
        {QStringLiteral("finished_at"), run.finishedAt > 0 ? QJsonValue(isoTime(run.finishedAt)) : QJsonValue()},
        {QStringLiteral("agent_id"), run.agentId},
        {QStringLiteral("lease_until"), run.leaseUntil > 0 ? QJsonValue(isoTime(run.leaseUntil)) : QJsonValue()}};
    if (withReport)
        json.insert(QStringLiteral("report"), storedJson(run.report));
    return json;
}

} // namespace

void registerQaRoutes(HttpServer &server, core::ScenarioRunner &runner, core::QaRunStore &store,
                      const QString &selfBaseUrl, const QStringList &peers)
{
    const QStringList allowedTargets = QStringList{selfBaseUrl} + peers;
    server.route(
        Method::Post, QStringLiteral("/api/v1/qa/scenarios"), Role::Operator,
        [&runner, selfBaseUrl, allowedTargets](const HttpRequest &request) {
            const auto body = parseJsonObject(request.body);
            if (!body)
                return errorReply(body.error());
            const auto params = core::ScenarioParams::fromJson(body.value(), selfBaseUrl);
            if (!params)
                return errorReply(params.error());
            if (const QStringList outside = params->targetsOutside(allowedTargets); !outside.isEmpty())
                return errorReply(QStringLiteral("qa_target_not_allowed"),
                                  QStringLiteral("targets: %1 is neither this agent (%2) nor one of "
                                                 "qa.peers; a scenario only targets those")
                                      .arg(outside.first(), selfBaseUrl));
            const QJsonValue reasonValue = body->value(QStringLiteral("reason"));
            if (!reasonValue.isUndefined() && (!reasonValue.isString() || reasonValue.toString().trimmed().isEmpty()))
                return errorReply(QStringLiteral("invalid_request"),
                                  QStringLiteral("reason must be a non-empty string when given"));
            const QString reason = reasonValue.isString()
                                       ? reasonValue.toString().trimmed()
                                       : QString(QStringLiteral("QA scenario ") + core::scenarioKindName(params->kind));
            auto started = runner.start(params.value(), actorOf(request), reason, request.traceId);
            if (!started && started.error().code == core::ErrorCode::Conflict)
                return errorReply(QStringLiteral("scenario_running"), started.error().publicMessage);
            if (!started)
                return errorReply(started.error());
            return HttpReply::accepted({{QStringLiteral("scenario_id"), started.value()}});
        });
    server.route(Method::Get, QStringLiteral("/api/v1/qa/scenarios"), Role::Viewer,
                 [&store](const HttpRequest &request) {
                     const auto limit = limitParameter(request);
                     if (!limit)
                         return errorReply(limit.error());
                     auto runs = store.list(limit.value());
                     if (!runs)
                         return errorReply(runs.error());
                     QJsonArray list;
                     for (const core::QaRun &run : runs.value())
                         list.append(runJson(run, false));
                     return HttpReply::json(list);
                 });
    server.route(Method::Get, QStringLiteral("/api/v1/qa/scenarios/<scenario_id>"), Role::Viewer,
                 [&store](const HttpRequest &request) {
                     auto run = store.find(request.pathArgument(QStringLiteral("scenario_id")));
                     if (!run)
                         return errorReply(run.error());
                     if (!run.value())
                         return errorReply(QStringLiteral("scenario_not_found"), QStringLiteral("no such scenario"));
                     return HttpReply::ok(runJson(*run.value(), true));
                 });
}

} // namespace payonce::http
