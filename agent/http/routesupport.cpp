#include "routesupport.h"

#include "jsonbody.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTimeZone>

#include <algorithm>

namespace payonce::http {

using core::Error;
using core::ErrorCode;

namespace {
Error invalid(const QString &message)
{
    return Error::make(ErrorCode::InvalidInput, message);
}
} // namespace

QString isoTime(qint64 ms)
{
    return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs) : QString();
}

QString actorOf(const HttpRequest &request)
{
    return request.principal ? request.principal->name : QStringLiteral("unknown");
}

core::Result<int> limitParameter(const HttpRequest &request, int fallback, int max)
{
    const QString text = request.queryItem(QStringLiteral("limit"));
    if (text.isNull())
        return fallback;
    bool ok = false;
    const int limit = text.toInt(&ok);
    if (!ok || limit < 1 || limit > max)
        return invalid(QStringLiteral("limit must be a whole number between 1 and %1").arg(max));
    return limit;
}

core::Result<QString> choiceParameter(const HttpRequest &request, const QString &name, const QStringList &allowed)
{
    const QString value = request.queryItem(name);
    if (value.isNull())
        return QString();
    if (!allowed.contains(value))
        return invalid(QStringLiteral("%1 must be one of: %2").arg(name, allowed.join(QStringLiteral(", "))));
    return value;
}

core::Result<QString> textParameter(const HttpRequest &request, const QString &name, int maxLength)
{
    const QString value = request.queryItem(name);
    if (value.isNull())
        return QString();
    if (value.isEmpty() || value.size() > maxLength)
        return invalid(QStringLiteral("%1 must be 1-%2 characters when given").arg(name).arg(maxLength));
    return value;
}

core::Result<std::optional<qint64>> timeParameter(const HttpRequest &request, const QString &name)
{
    const QString text = request.queryItem(name);
    if (text.isNull())
        return std::optional<qint64>();
    QDateTime at = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!at.isValid())
        return invalid(QStringLiteral("%1 must be an ISO-8601 date-time such as 2024-05-01T12:00:00Z").arg(name));
    if (at.timeSpec() == Qt::LocalTime)
        at.setTimeZone(QTimeZone::utc());
    return std::optional<qint64>(at.toMSecsSinceEpoch());
}

core::Result<qint64> idArgument(const HttpRequest &request, const QString &name)
{
    const QString text = request.pathArgument(name);
    const bool digits = !text.isEmpty() && std::all_of(text.begin(), text.end(), [](QChar ch) { return ch.isDigit(); });
    bool ok = false;
    const qint64 id = digits ? text.toLongLong(&ok) : 0;
    if (!ok || id < 1)
        return invalid(QStringLiteral("%1 must be a positive whole number").arg(name));
    return id;
}

core::Result<ActionBody> parseActionBody(const QByteArray &body, const QStringList &requiredFields)
{
    auto object = parseJsonObject(body, requiredFields + QStringList{QStringLiteral("reason")});
    if (!object)
        return object.error();
    const QJsonValue reason = object->value(QStringLiteral("reason"));
    if (!reason.isString() || reason.toString().trimmed().isEmpty())
        return invalid(QStringLiteral("reason must be a non-empty string"));
    return ActionBody{object.value(), reason.toString().trimmed()};
}

core::Result<IdAction> parseIdAction(const HttpRequest &request, const QString &idName)
{
    const auto id = idArgument(request, idName);
    if (!id)
        return id.error();
    auto body = parseActionBody(request.body);
    if (!body)
        return body.error();
    return IdAction{id.value(), std::move(body).value()};
}

QString compactJson(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QJsonValue storedJson(const QString &text)
{
    if (text.isEmpty())
        return QJsonValue::Null;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8());
    if (document.isObject())
        return document.object();
    if (document.isArray())
        return document.array();
    return text;
}

QJsonArray refundItemsJson(const core::RefundItems &items)
{
    QJsonArray out;
    for (auto it = items.cbegin(); it != items.cend(); ++it)
        out.append(QJsonObject{{QStringLiteral("sku_id"), it.key()}, {QStringLiteral("qty"), it.value()}});
    return out;
}

} // namespace payonce::http
