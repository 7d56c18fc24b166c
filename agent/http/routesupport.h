#pragma once

#include "httptypes.h"

#include "core/common/result.h"
#include "core/settlement/partialrefund.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <optional>

namespace payonce::http {

/// Small pieces the operator routes share: reading query parameters, reasons and ids
/// strictly (a bad value is ErrorCode::InvalidInput whose public message names it, which
/// errorReply() answers 400 invalid_request), and writing times and stored JSON. Pure;
/// any thread.

/// ISO-8601 UTC with milliseconds ("2024-05-01T12:00:00.000Z"); empty for 0 (never set).
QString isoTime(qint64 ms);

/// The caller's name for the audit trail (the token's name).
QString actorOf(const HttpRequest &request);

/// ?limit=: `fallback` when absent; otherwise a whole number in 1..max.
core::Result<int> limitParameter(const HttpRequest &request, int fallback = 100, int max = 1000);

/// ?<name>= that must be one of `allowed` when present; empty when absent.
core::Result<QString> choiceParameter(const HttpRequest &request, const QString &name, const QStringList &allowed);

/// ?<name>= as an exact-match filter: 1..maxLength characters when present; empty when absent.
core::Result<QString> textParameter(const HttpRequest &request, const QString &name, int maxLength = 191);

/// ?<name>= as an ISO-8601 date-time (a time without offset is taken as UTC): epoch ms,
/// nullopt when absent.
core::Result<std::optional<qint64>> timeParameter(const HttpRequest &request, const QString &name);

/// The positive integer id in the path placeholder `name`.
core::Result<qint64> idArgument(const HttpRequest &request, const QString &name);

/// The body of an operator action: a JSON object with a non-empty string "reason"
/// (trimmed) — docs/openapi.yaml: every action takes a reason.
struct ActionBody {
    QJsonObject object;
    QString reason;
};
core::Result<ActionBody> parseActionBody(const QByteArray &body, const QStringList &requiredFields = {});

/// An action on one thing named by an id in the path: POST …/{id}/approve {"reason"}.
struct IdAction {
    qint64 id = 0;
    ActionBody body;
};
core::Result<IdAction> parseIdAction(const HttpRequest &request, const QString &idName = QStringLiteral("id"));

/// A refund's items as the contract writes them: [{"sku_id", "qty"}, …] in SKU order.
QJsonArray refundItemsJson(const core::RefundItems &items);

/// Compact JSON text of an object (audit before/after).
QString compactJson(const QJsonObject &object);

/// Stored JSON text as a JSON value: an object or array as such, other text as a string,
/// empty text as null.
QJsonValue storedJson(const QString &text);

} // namespace payonce::http
