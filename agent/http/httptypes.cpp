#include "httptypes.h"

#include <QJsonDocument>

namespace payonce::http {

QString methodName(Method method)
{
    switch (method) {
    case Method::Get: return QStringLiteral("GET");
    case Method::Post: return QStringLiteral("POST");
    case Method::Put: return QStringLiteral("PUT");
    case Method::Patch: return QStringLiteral("PATCH");
    case Method::Delete: return QStringLiteral("DELETE");
    case Method::Head: return QStringLiteral("HEAD");
    case Method::Options: return QStringLiteral("OPTIONS");
    }
    Q_UNREACHABLE();
}

QString roleName(Role role)
{
    switch (role) {
    case Role::None: return QStringLiteral("none");
    case Role::Viewer: return QStringLiteral("viewer");
    case Role::Operator: return QStringLiteral("operator");
    case Role::Approver: return QStringLiteral("approver");
    }
    Q_UNREACHABLE();
}

std::optional<Role> roleFromName(QStringView name)
{
    if (name == u"viewer")
        return Role::Viewer;
    if (name == u"operator")
        return Role::Operator;
    if (name == u"approver")
        return Role::Approver;
    return std::nullopt;
}

QByteArray HttpRequest::header(QByteArrayView name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

bool HttpRequest::hasHeader(QByteArrayView name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

QString HttpRequest::queryItem(const QString &name) const
{
    if (!query.hasQueryItem(name))
        return {};
    return query.queryItemValue(name, QUrl::FullyDecoded);
}

HttpReply HttpReply::json(const QJsonObject &object, int status)
{
    HttpReply r;
    r.status = status;
    r.body = QJsonDocument(object).toJson(QJsonDocument::Compact);
    return r;
}

HttpReply HttpReply::json(const QJsonArray &array, int status)
{
    HttpReply r;
    r.status = status;
    r.body = QJsonDocument(array).toJson(QJsonDocument::Compact);
    return r;
}

HttpReply HttpReply::text(const QByteArray &text, int status)
{
    HttpReply r;
    r.status = status;
    r.body = text;
    r.contentType = QByteArrayLiteral("text/plain; charset=utf-8");
    return r;
}

HttpReply &HttpReply::setHeader(const QByteArray &name, const QByteArray &value)
{
    for (auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0) {
            h.second = value;
            return *this;
        }
    }
    headers.append({name, value});
    return *this;
}

QByteArray HttpReply::header(QByteArrayView name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

} // namespace payonce::http
