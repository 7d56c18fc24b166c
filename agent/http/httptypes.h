#pragma once

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrlQuery>

#include <functional>
#include <optional>

namespace payonce::http {

/// The HTTP methods routes can be registered for.
enum class Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
    Options
};

QString methodName(Method method);

/// Operator roles, each including the ones before it (docs/openapi.yaml, "Operations"). None marks a
/// route that needs no token.
enum class Role {
    None = 0,
    Viewer = 1,
    Operator = 2,
    Approver = 3
};

/// "viewer", "operator", "approver" ("none" for Role::None).
QString roleName(Role role);
/// The role named by a config file's "role" value; nullopt for anything else.
std::optional<Role> roleFromName(QStringView name);

/// Who sent a request, as established by the Authenticator.
struct Principal {
    QString name;
    Role role = Role::None;
    bool operator==(const Principal &) const = default;
};

/// A request as handlers see it: a value copied on the event-loop thread before the
/// handler is queued, so a handler on a worker thread never touches Qt's request or the
/// socket (both may be gone by the time it runs). Cheap to copy (implicitly shared Qt
/// containers).
struct HttpRequest {
    Method method = Method::Get;
    QString path;                          ///< decoded path, e.g. "/api/v1/orders/ORD1"
    QHash<QString, QString> pathArguments; ///< "<order_no>" in the pattern → "order_no"
    QUrlQuery query;
    QList<QPair<QByteArray, QByteArray>> headers; ///< names lower-cased, in arrival order
    QByteArray body;
    QHostAddress peerAddress; ///< the connection's peer (nginx, behind it)
    /// Who the request is counted against: peerAddress, or behind a trusted proxy the
    /// client X-Forwarded-For names (TrustedProxies::clientAddress()).
    QHostAddress clientAddress;
    QString traceId; ///< 32 lower-case hex digits (W3C trace-id)
    /// The W3C traceparent that calls made for this request send downstream (gateways):
    /// this trace id with a span id of its own for this request.
    QByteArray traceParent;
    std::optional<Principal> principal; ///< set when the route needed a token

    /// The first header of that name (case-insensitive), or a null QByteArray.
    QByteArray header(QByteArrayView name) const;
    bool hasHeader(QByteArrayView name) const;
    QString pathArgument(const QString &name) const { return pathArguments.value(name); }
    /// The decoded value of a query item, or a null QString.
    QString queryItem(const QString &name) const;
};

/// What a handler answers: status, body, content type and extra headers. Error replies
/// are made with errorReply() (errormapping.h), the one place that knows error statuses.
struct HttpReply {
    int status = 200;
    QByteArray body;
    QByteArray contentType = QByteArrayLiteral("application/json");
    QList<QPair<QByteArray, QByteArray>> headers;

    static HttpReply json(const QJsonObject &object, int status = 200);
    static HttpReply json(const QJsonArray &array, int status = 200);
    static HttpReply text(const QByteArray &text, int status = 200);
    static HttpReply ok(const QJsonObject &object) { return json(object, 200); }
    static HttpReply created(const QJsonObject &object) { return json(object, 201); }
    static HttpReply accepted(const QJsonObject &object) { return json(object, 202); }

    /// Sets (replaces) a header; names compare case-insensitively.
    HttpReply &setHeader(const QByteArray &name, const QByteArray &value);
    QByteArray header(QByteArrayView name) const;
    /// X-Payonce-Layer: the duplicate-defence layer that decided this reply (docs/openapi.yaml).
    HttpReply &setLayer(const QByteArray &layer) { return setHeader(QByteArrayLiteral("X-Payonce-Layer"), layer); }
    QByteArray layer() const { return header("x-payonce-layer"); }
};

/// A route's work: runs on the server's worker pool, may block (SQL, Redis), must not
/// touch QObjects of the event-loop thread. Exceptions are caught and answered 500.
using Handler = std::function<HttpReply(const HttpRequest &)>;

} // namespace payonce::http
