#include "findingroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/ports/findingreader.h"

#include <QJsonArray>

namespace payonce::http {

QStringList findingKinds()
{
    return {QStringLiteral("effect_mismatch"), QStringLiteral("missing_outbox"),  QStringLiteral("stuck_paying"),
            QStringLiteral("stuck_accepted"),  QStringLiteral("amount_mismatch"), QStringLiteral("double_payment"),
            QStringLiteral("oversold"),        QStringLiteral("refund_failed"),   QStringLiteral("refund_abnormal")};
}

QJsonObject findingJson(const core::StoredFinding &finding)
{
    return QJsonObject{
        {QStringLiteral("id"), finding.id},
        {QStringLiteral("kind"), finding.kind},
        {QStringLiteral("subject"), finding.subject},
        {QStringLiteral("order_no"), finding.orderNo},
        {QStringLiteral("pay_no"), finding.payNo},
        {QStringLiteral("evidence"), finding.evidence},
        {QStringLiteral("status"), finding.status},
        {QStringLiteral("seen_count"), finding.seenCount},
        {QStringLiteral("first_seen"), isoTime(finding.firstSeenAtMs)},
        {QStringLiteral("last_seen"), isoTime(finding.lastSeenAtMs)},
    };
}

void registerFindingRoutes(HttpServer &server, core::FindingReader &findings)
{
    server.route(Method::Get, QStringLiteral("/api/v1/findings"), Role::Viewer, [&](const HttpRequest &request) {
        const auto status = choiceParameter(request, QStringLiteral("status"),
                                            {QStringLiteral("open"), QStringLiteral("resolved")});
        if (!status)
            return errorReply(status.error());
        const auto kind = choiceParameter(request, QStringLiteral("kind"), findingKinds());
        if (!kind)
            return errorReply(kind.error());
        const auto limit = limitParameter(request);
        if (!limit)
            return errorReply(limit.error());
        auto found = findings.list({status.value(), kind.value(), limit.value()});
        if (!found)
            return errorReply(found.error());
        QJsonArray list;
        for (const core::StoredFinding &finding : found.value())
            list.append(findingJson(finding));
        return HttpReply::json(list);
    });
}

} // namespace payonce::http
