#include "auditroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/ports/auditreader.h"

#include <QJsonArray>

namespace payonce::http {

namespace {

QJsonObject toJson(const core::AuditRecord &record)
{
    const core::AuditEntry &e = record.entry;
    return QJsonObject{
        {QStringLiteral("id"), record.id},
        {QStringLiteral("at"), isoTime(record.atMs)},
        {QStringLiteral("actor"), e.actor},
        {QStringLiteral("action"), e.action},
        {QStringLiteral("target"), e.target},
        {QStringLiteral("before"), storedJson(e.before)},
        {QStringLiteral("after"), storedJson(e.after)},
        {QStringLiteral("reason"), e.reason},
        {QStringLiteral("trace_id"), e.traceId},
    };
}

} // namespace

void registerAuditRoutes(HttpServer &server, core::AuditReader &audit)
{
    server.route(Method::Get, QStringLiteral("/api/v1/audit"), Role::Viewer, [&](const HttpRequest &request) {
        core::AuditQuery query;
        const auto since = timeParameter(request, QStringLiteral("since"));
        if (!since)
            return errorReply(since.error());
        query.sinceMs = since.value();
        for (auto [name, field] :
             {std::pair{QStringLiteral("actor"), &query.actor}, std::pair{QStringLiteral("action"), &query.action},
              std::pair{QStringLiteral("target"), &query.target}}) {
            const auto value = textParameter(request, name);
            if (!value)
                return errorReply(value.error());
            *field = value.value();
        }
        const auto limit = limitParameter(request);
        if (!limit)
            return errorReply(limit.error());
        query.limit = limit.value();
        auto records = audit.list(query);
        if (!records)
            return errorReply(records.error());
        QJsonArray list;
        for (const core::AuditRecord &record : records.value())
            list.append(toJson(record));
        return HttpReply::json(list);
    });
}

} // namespace payonce::http
