#pragma once

#include "httpserver.h"

#include "core/settlement/finding.h"

#include <QJsonObject>

namespace payonce::core {
class FindingReader;
}

namespace payonce::http {

/// GET /api/v1/findings?status=open|resolved&kind=<kind>&limit=N (viewer; limit 1-1000,
/// default 100) → the findings, most recently seen first, each as findingJson(). An
/// unknown status or kind: 400 invalid_request.
void registerFindingRoutes(HttpServer &server, core::FindingReader &findings);

/// {"id","kind","subject","order_no","pay_no","evidence","status","seen_count","first_seen",
/// "last_seen"}, times ISO-8601 UTC with milliseconds (also POST /api/v1/reconciliation/run).
QJsonObject findingJson(const core::StoredFinding &finding);

/// Every finding kind (docs/openapi.yaml), for validating ?kind=.
QStringList findingKinds();

} // namespace payonce::http
