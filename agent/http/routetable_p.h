#pragma once

// The server's routes: patterns of literal and <placeholder> segments, matched against a
// request's path, and a route's handler called so that nothing it throws escapes.

#include "endpointmetrics_p.h"
#include "httpserver.h"

#include <QHash>
#include <QHttpServerRequest>
#include <QStringList>

#include <memory>
#include <optional>

namespace payonce::http {

struct Segment {
    QString text; // literal text, or the placeholder's name
    bool placeholder = false;
};

struct Route {
    Method method;
    QString pattern;
    QList<Segment> segments;
    RouteOptions options;
    Handler handler;          ///< a route that answers when it returns
    DeferredHandler deferred; ///< or one that sends its reply through a ReplySink
    std::shared_ptr<const EndpointMetrics> metrics;
    MemoryFirstHandler fromMemory; ///< a deferred route's first try on the event loop, if any
};

QList<Segment> parsePattern(const QString &pattern);
std::optional<Method> toMethod(QHttpServerRequest::Method method);

/// What matching a path found: the route (null when none), its placeholders' values, and
/// the methods of the routes whose path matched but whose method did not (for 405's Allow).
struct RouteMatch {
    const Route *route = nullptr;
    QHash<QString, QString> arguments;
    QStringList allowed;
};

/// The route for method at the percent-encoded path: matched segment by segment on the
/// encoded path, so "%2F" stays inside one segment; of several, the most literal segments win.
RouteMatch matchRoute(const QList<Route> &routes, std::optional<Method> method, const QString &encodedPath);

/// The handler's reply, or 500 `internal` when it throws (logged with the trace).
HttpReply invokeSafely(const Handler &handler, const HttpRequest &request);
/// The route's reply through sink (a deferred route sends it itself), 500 when it throws.
void invokeSafely(const Route &route, const HttpRequest &request, const ReplySink &sink);
/// route.fromMemory(request, sink), a 500 through the sink (and true) if it throws.
bool tryFromMemorySafely(const Route &route, const HttpRequest &request, const ReplySink &sink);

} // namespace payonce::http
