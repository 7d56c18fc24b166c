#include "httpserver.h"

#include "httpserver_p.h"

#include "core/metrics/metricsregistry.h"
#include "errormapping.h"
#include "logging/categories.h"
#include "logging/logging.h"
#include "shared/tracecontext.h"
#include "streamregistry.h"

#include <QAbstractHttpServer>
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QPointer>
#include <QTcpSocket>
#include <QThreadPool>
#include <QWebSocket>

#include <array>
#include <chrono>
#include <exception>
#include <mutex>

namespace payonce::http {

namespace {

constexpr int kWebSocketSendBuffer = 64 * 1024;

} // namespace

/// QAbstractHttpServer gives us the parsed request and its socket; routing, auth and
/// replies are ours (QHttpServer's router has no 405 and answers from the event loop).
class HttpServer::Backend : public QAbstractHttpServer {
public:
    explicit Backend(HttpServer::Private *d) : m_d(d) {}

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override
    {
        // QtHttpServer 6.4 asks this for an upgrade too, before the handshake: true lets
        // the WebSocket server take the socket, false makes it call missingHandler() and
        // close. A refused upgrade has had its answer written here already.
        if (request.value(QByteArrayLiteral("upgrade")).compare("websocket", Qt::CaseInsensitive) == 0) {
            if (m_d->admitUpgrade(request, socket))
                return true;
            socket->setProperty(kAnsweredProperty, true);
            return false;
        }
        m_d->dispatch(request, socket, makeResponder(request, socket));
        return true;
    }
    void missingHandler(const QHttpServerRequest &, QTcpSocket *socket) override
    {
        if (socket->property(kAnsweredProperty).toBool())
            return; // a refused upgrade, answered in handleRequest()
        // Otherwise not reached: handleRequest() answers everything.
        ReplyContext context;
        context.traceId = TraceContext::fresh().traceId;
        writeReply(socket, errorReply(QStringLiteral("not_found"), QStringLiteral("no such resource")), context, true);
    }

private:
    static constexpr const char *kAnsweredProperty = "payonce_upgrade_answered";
    HttpServer::Private *m_d;
};

std::optional<HttpReply> HttpServer::Private::authorize(const HttpRequest &req, QByteArrayView authorization,
                                                        Role minimumRole, std::optional<Principal> *principal)
{
    // The token first: a valid one is never refused, whatever its address failed before.
    *principal = authenticator.authenticate(authorization);
    if (!*principal) {
        // "Bearer" with nothing after it names no token either: nothing was guessed, so
        // it is not a failure for the limiter (a console without its token is no attack).
        const QByteArrayView presented = authorization.trimmed();
        const bool missing = presented.isEmpty() || presented.compare("Bearer", Qt::CaseInsensitive) == 0;
        if (authMetrics)
            (missing ? authMetrics->missingToken : authMetrics->unknownToken)->add();
        if (!missing) {
            int retryAfter = 0;
            if (limiter.isBlocked(req.clientAddress, &retryAfter)) {
                limiter.recordRefusal();
                if (authMetrics)
                    authMetrics->refused->add();
                HttpReply reply = errorReply(QStringLiteral("too_many_requests"),
                                             QStringLiteral("too many failed authentications from your address"));
                reply.setHeader(QByteArrayLiteral("Retry-After"), QByteArray::number(retryAfter));
                return reply;
            }
            // Logged while under the limit only (10 lines a minute per address at most): a
            // client must not be able to flood the log, or fill a pipe that nobody reads.
            limiter.recordFailure(req.clientAddress);
            qCInfo(lcHttp).noquote() << "unknown token from" << req.clientAddress.toString() << "to" << req.path
                                     << "trace" << req.traceId;
        } else {
            qCDebug(lcHttp).noquote() << "request without a token from" << req.clientAddress.toString() << "to"
                                      << req.path << "trace" << req.traceId;
        }
        HttpReply reply = errorReply(QStringLiteral("unauthenticated"),
                                     QStringLiteral("a valid bearer token is required"));
        reply.setHeader(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer"));
        return reply;
    }
    if (int((*principal)->role) < int(minimumRole))
        return errorReply(QStringLiteral("forbidden"),
                          QStringLiteral("this needs the role %1; %2 has %3")
                              .arg(roleName(minimumRole), (*principal)->name, roleName((*principal)->role)));
    return std::nullopt;
}

bool HttpServer::Private::admitUpgrade(const QHttpServerRequest &request, QTcpSocket *socket)
{
    HttpRequest req;
    req.peerAddress = request.remoteAddress();
    req.clientAddress = clientAddressOf(request);
    req.path = request.url().path(QUrl::FullyDecoded);
    adoptTrace(req, traceFor(request.value(QByteArrayLiteral("traceparent"))));
    const logging::ScopedFields traced(kTraceIdField, req.traceId);
    ReplyContext context;
    context.traceId = req.traceId;
    context.request = QStringLiteral("UPGRADE ") + req.path;
    context.closeAfter = true;
    if (!webSocketHandler || req.path != webSocketPath || request.method() != QHttpServerRequest::Method::Get) {
        context.metrics = unmatchedMetrics;
        writeReply(socket, errorReply(QStringLiteral("not_found"), QStringLiteral("no WebSocket at %1").arg(req.path)),
                   context, true);
        return false;
    }
    // The token rides in the upgrade request's Authorization header only: a query's token
    // would be kept by every log that writes request lines (proxies, browsers' history).
    const QByteArray authorization = request.value(QByteArrayLiteral("authorization"));
    if (authorization.isEmpty() && request.query().hasQueryItem(QStringLiteral("access_token"))) {
        HttpReply reply = errorReply(QStringLiteral("unauthenticated"),
                                     QStringLiteral("send the stream's token as Authorization: Bearer on the upgrade "
                                                    "request; ?access_token= is not accepted"));
        reply.setHeader(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer"));
        writeReply(socket, std::move(reply), context, true);
        return false;
    }
    std::optional<Principal> principal;
    if (auto refusal = authorize(req, authorization, webSocketRole, &principal)) {
        writeReply(socket, std::move(*refusal), context, true);
        return false;
    }
    if (streams.admit(socket, *principal, Authenticator::bearerTokenSha256(authorization))
        == StreamRegistry::Admission::OverCap) {
        streamsRefused.fetch_add(1, std::memory_order_relaxed);
        if (streamsOverCap)
            streamsOverCap->add();
        qCWarning(lcHttp).noquote() << "stream refused:" << principal->name << "already holds" << streams.maxPerToken()
                                    << "streams (stream.max_per_token), from" << req.clientAddress.toString();
        writeReply(
            socket,
            errorReply(QStringLiteral("too_many_streams"),
                       QStringLiteral("%1 already holds %2 open streams, the most one token may (stream.max_per_token)")
                           .arg(principal->name)
                           .arg(streams.maxPerToken())),
            context, true);
        return false;
    }
    // A small kernel send buffer: a client that stops reading shows up as bytes waiting
    // in Qt (what the stream's backpressure watches) instead of megabytes in the kernel.
    socket->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, kWebSocketSendBuffer);
    if (guard)
        guard->upgradeAccepted(socket);
    qCInfo(lcHttp).noquote() << "WebSocket" << req.path << "opened by" << principal->name << "from"
                             << req.clientAddress.toString();
    return true;
}

void HttpServer::Private::dispatch(const QHttpServerRequest &request, QTcpSocket *socket,
                                   QHttpServerResponder &&responder)
{
    HttpRequest req = requestOf(request);
    const logging::ScopedFields traced(kTraceIdField, req.traceId);

    const std::optional<Method> method = toMethod(request.method());
    ReplyContext context;
    context.metrics = unmatchedMetrics;
    context.traceId = req.traceId;
    context.request = (method ? methodName(*method) : QStringLiteral("OTHER")) + u' ' + req.path;
    context.closeAfter = draining || req.header("connection").compare("close", Qt::CaseInsensitive) == 0;

    // Matched on the encoded path, so "%2F" stays inside one segment.
    const RouteMatch match = matchRoute(routes, method, request.url().path(QUrl::FullyEncoded));
    const Route *matched = match.route;
    const QStringList &allowed = match.allowed;
    if (!matched) {
        HttpReply reply =
            allowed.isEmpty()
                ? errorReply(QStringLiteral("not_found"), QStringLiteral("no resource at %1").arg(req.path))
                : errorReply(QStringLiteral("method_not_allowed"),
                             QStringLiteral("%1 allows %2").arg(req.path, allowed.join(QStringLiteral(", "))));
        if (!allowed.isEmpty())
            reply.setHeader(QByteArrayLiteral("Allow"), allowed.join(QStringLiteral(", ")).toLatin1());
        writeReply(socket, std::move(reply), context, true);
        return;
    }
    req.method = *method;
    req.pathArguments = match.arguments;
    context.rejectionLayer = matched->options.rejectionLayer;
    context.metrics = matched->metrics;

    if (matched->options.minimumRole != Role::None) {
        std::optional<Principal> principal;
        if (auto refusal = authorize(req, req.header("authorization"), matched->options.minimumRole, &principal)) {
            writeReply(socket, std::move(*refusal), context, true);
            return;
        }
        req.principal = principal;
    }

    if (matched->options.onEventLoop) {
        Q_ASSERT(matched->handler);
        writeReply(socket, invokeSafely(matched->handler, req), context, false);
        return;
    }

    runOnLane(*matched, std::move(req), socket, std::move(responder), std::move(context));
}

/// The reply a full lane gives: the route's own (a platform's FAIL) or 503 server_busy,
/// with Retry-After.
HttpReply HttpServer::Private::busyReplyOf(const Route &route, const ReplyContext &context, const QString &traceId)
{
    const ExecutionLane &executor = lane(route.options.lane);
    qCWarning(lcHttp).noquote() << "lane" << laneName(executor.lane()) << "is full (" << executor.threads()
                                << "threads," << executor.queueLimit() << "queued): 503 for" << context.request
                                << "trace" << traceId;
    HttpReply reply = route.options.busyReply
                          ? route.options.busyReply()
                          : errorReply(QStringLiteral("server_busy"),
                                       QStringLiteral("the server is busy with requests like this one; retry shortly"));
    reply.setHeader(QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1"));
    return reply;
}

/// The safe responder pattern (docs/architecture.md, "QtHttpServer 6.4"): the reply goes
/// back to the event loop as an event posted to the guard, and is written only if the
/// socket still exists then; nothing on a worker touches the socket. Not QFuture::then
/// with the socket as context: in Qt 6.4 a continuation attached while its task is
/// finishing can run twice, and the second run crashed the agent (SIGSEGV in
/// QFutureInterfaceBase::reportStarted under a scrape load).
ReplySink HttpServer::Private::replySinkFor(QTcpSocket *socket, QHttpServerResponder &&responder,
                                            const ReplyContext &context)
{
    auto responderPtr = std::make_shared<QHttpServerResponder>(std::move(responder));
    // Counts the request until its reply has been written or dropped with the socket.
    auto inFlightToken = std::shared_ptr<void>((inFlight->fetch_add(1), nullptr),
                                               [counter = inFlight](void *) { counter->fetch_sub(1); });
    guard->requestStarted(socket);
    // Sent once, from whichever thread has the reply (the handler's, or a deferred route's
    // later one). Everything the reply needs moves into the event, so the responder is
    // destroyed on the event loop's thread. drain() waits for every reply in flight,
    // deferred ones too; one sent after the server has gone is dropped.
    return ReplySink(
        [target = replyTarget, responderPtr = std::move(responderPtr), inFlightToken = std::move(inFlightToken),
         socketPtr = QPointer<QTcpSocket>(socket), context](HttpReply reply) mutable {
            std::lock_guard alive(target->mutex);
            ConnectionGuard *const replyTo = target->guard;
            if (!replyTo)
                return;
            QMetaObject::invokeMethod(
                replyTo,
                [replyTo, responderPtr = std::move(responderPtr), inFlightToken = std::move(inFlightToken),
                 socketPtr = std::move(socketPtr), context = std::move(context), reply = std::move(reply)]() mutable {
                    if (!socketPtr)
                        return; // the client left; the token goes with this event
                    QTcpSocket *s = responderPtr->socket();
                    writeReply(s, std::move(reply), context, false);
                    replyTo->requestFinished(s);
                },
                Qt::QueuedConnection);
        },
        [] { return errorReply(QStringLiteral("internal"), QStringLiteral("internal error")); });
}

/// A pool-run route: admitted to its lane (503 with Retry-After when the lane is full), run
/// on one of its threads, its reply posted back to the event loop. A route with a
/// memory-first handler tries that first, here on the event loop, and takes a lane's place
/// only when it declines.
void HttpServer::Private::runOnLane(const Route &route, HttpRequest req, QTcpSocket *socket,
                                    QHttpServerResponder &&responder, ReplyContext context)
{
    ExecutionLane &executor = lane(route.options.lane);
    if (!route.fromMemory && !executor.tryAdmit()) {
        writeReply(socket, busyReplyOf(route, context, req.traceId), context, true);
        return;
    }
    const ReplySink sink = replySinkFor(socket, std::move(responder), context);
    if (route.fromMemory) {
        if (tryFromMemorySafely(route, req, sink))
            return;
        if (!executor.tryAdmit()) {
            // What writeReply adds to the server's own replies, for this one sent through the sink.
            HttpReply busy = busyReplyOf(route, context, req.traceId);
            if (busy.layer().isEmpty() && !route.options.rejectionLayer.isEmpty())
                busy.setLayer(route.options.rejectionLayer);
            sink.send(std::move(busy));
            return;
        }
    }
    executor.pool().start([route = &route, req = std::move(req), &executor, sink]() {
        {
            // Every line the handler logs on this worker names the request's trace.
            const logging::ScopedFields tracedOnWorker(kTraceIdField, req.traceId);
            invokeSafely(*route, req, sink); // routes stay as they are once listening
        }
        executor.finished(); // the place is the handler's, whether or not its client waits
    });
}

HttpRequest HttpServer::Private::requestOf(const QHttpServerRequest &request) const
{
    HttpRequest req;
    req.peerAddress = request.remoteAddress();
    req.clientAddress = clientAddressOf(request);
    req.path = request.url().path(QUrl::FullyDecoded);
    req.query = request.query();
    req.body = request.body();
    const auto headers = request.headers();
    req.headers.reserve(headers.size());
    for (const auto &h : headers)
        req.headers.append({h.first.toLower(), h.second});
    adoptTrace(req, traceFor(req.header("traceparent")));
    return req;
}

HttpServer::HttpServer(const Options &options, Authenticator authenticator, QObject *parent)
    : QObject(parent), d(std::make_unique<Private>(options, std::move(authenticator)))
{
    d->backend = new Backend(d.get());
    d->backend->setParent(this);
    if (options.metrics) {
        d->unmatchedMetrics = std::make_shared<EndpointMetrics>(*options.metrics, QStringLiteral("unmatched"));
        d->authMetrics.emplace(*options.metrics);
        d->streamsOverCap = &options.metrics->counter(
            QStringLiteral("payonce_stream_refused_total"),
            QStringLiteral("Stream upgrades refused at the handshake, by reason"),
            {{QStringLiteral("reason"), QStringLiteral("per_token_cap")}});
        d->streamsRevoked = &options.metrics->counter(
            QStringLiteral("payonce_stream_revoked_total"),
            QStringLiteral("Open streams closed because their token was removed on a reload"));
        for (const auto &l : d->lanes)
            l->countRejectionsIn(*options.metrics);
        // What the connection guard closed or refused: where a client's "connection
        // closed with a request in flight" would show its cause.
        addConnectionReaders(*options.metrics,
                             [d = d.get()] { return d->guard ? d->guard->stats() : ConnectionGuard::Stats{}; });
        options.metrics->addReader(
            QStringLiteral("payonce_http_lane_admitted"),
            QStringLiteral("Handlers admitted to each lane: running plus queued"), core::MetricType::Gauge,
            [lanes = &d->lanes] {
                QList<core::MetricSample> samples;
                for (const auto &l : *lanes)
                    samples.append({{{QStringLiteral("lane"), laneName(l->lane())}}, double(l->admitted())});
                return samples;
            });
    }
}

HttpServer::~HttpServer()
{
    // Handlers may still run; they only hold value copies, but their continuations must
    // not outlive the sockets' owner.
    d->waitForLanes(-1);
    {
        std::lock_guard going(d->replyTarget->mutex);
        d->replyTarget->guard = nullptr;
    }
    delete d->backend;
    d->backend = nullptr;
}

void HttpServer::route(Method method, const QString &pattern, Role minimumRole, Handler handler)
{
    RouteOptions options;
    options.minimumRole = minimumRole;
    route(method, pattern, options, std::move(handler));
}

void HttpServer::route(Method method, const QString &pattern, const RouteOptions &options, Handler handler)
{
    Q_ASSERT(handler);
    std::shared_ptr<const EndpointMetrics> metrics;
    if (d->options.metrics)
        metrics = std::make_shared<EndpointMetrics>(*d->options.metrics, pattern);
    d->routes.append(
        Route{method, pattern, parsePattern(pattern), options, std::move(handler), {}, std::move(metrics), {}});
}

void HttpServer::routeDeferred(Method method, const QString &pattern, const RouteOptions &options,
                               DeferredHandler handler)
{
    routeDeferred(method, pattern, options, {}, std::move(handler));
}

void HttpServer::routeDeferred(Method method, const QString &pattern, const RouteOptions &options,
                               MemoryFirstHandler fromMemory, DeferredHandler handler)
{
    Q_ASSERT(handler && !options.onEventLoop);
    std::shared_ptr<const EndpointMetrics> metrics;
    if (d->options.metrics)
        metrics = std::make_shared<EndpointMetrics>(*d->options.metrics, pattern);
    d->routes.append(Route{method,
                           pattern,
                           parsePattern(pattern),
                           options,
                           {},
                           std::move(handler),
                           std::move(metrics),
                           std::move(fromMemory)});
}

QList<RouteInfo> HttpServer::routes() const
{
    QList<RouteInfo> list;
    for (const Route &r : std::as_const(d->routes))
        list.append(RouteInfo{r.method, r.pattern, r.options.minimumRole, false});
    for (RouteInfo &info : list) {
        // The plain-GET route webSocketRoute() adds answers 426; the upgrade's role is its own.
        if (d->webSocketHandler && info.method == Method::Get && info.pattern == d->webSocketPath) {
            info.webSocket = true;
            info.minimumRole = d->webSocketRole;
        }
    }
    return list;
}

void HttpServer::webSocketRoute(const QString &path, Role minimumRole, WebSocketHandler handler)
{
    Q_ASSERT(handler && !d->webSocketHandler);
    d->webSocketPath = path;
    d->webSocketRole = minimumRole;
    d->webSocketHandler = std::move(handler);
    // A plain GET to the path (no upgrade) is told what to do.
    route(Method::Get, path, Role::None, [](const HttpRequest &) {
        return errorReply(QStringLiteral("upgrade_required"), QStringLiteral("this resource is a WebSocket"));
    });
    connect(d->backend, &QAbstractHttpServer::newWebSocketConnection, this, [this] {
        while (d->backend->hasPendingWebSocketConnections()) {
            std::unique_ptr<QWebSocket> socket = d->backend->nextPendingWebSocketConnection();
            if (!socket)
                continue;
            d->streams.attach(socket.get());
            d->webSocketHandler(std::move(socket));
        }
    });
}

void HttpServer::addHealthRoutes(ReadinessCheck check)
{
    RouteOptions live;
    live.onEventLoop = true;
    route(Method::Get, QStringLiteral("/healthz"), live, [](const HttpRequest &) {
        return HttpReply::ok(QJsonObject{{QStringLiteral("status"), QStringLiteral("up")}});
    });
    route(Method::Get, QStringLiteral("/readyz"), Role::None, [check = std::move(check)](const HttpRequest &) {
        const Readiness r = check ? check() : Readiness{};
        QJsonObject body{
            {QStringLiteral("status"), r.databaseReachable ? QStringLiteral("ready") : QStringLiteral("unready")},
            {QStringLiteral("redis"), r.keyStoreDegraded ? QStringLiteral("degraded") : QStringLiteral("ok")}};
        if (!r.databaseReachable) {
            body.insert(QStringLiteral("reason"),
                        r.detail.isEmpty() ? QStringLiteral("database unreachable") : r.detail);
            return HttpReply::json(body, httpStatus(u"unavailable"));
        }
        return HttpReply::ok(body);
    });
}

core::Result<quint16> HttpServer::listen(const QHostAddress &address, quint16 port)
{
    if (d->guard)
        return core::Error::make(core::ErrorCode::Internal, QStringLiteral("HttpServer::listen called twice"));
    auto *guard = new ConnectionGuard(d->options.limits);
    if (!guard->listen(address, port)) {
        const QString message =
            QStringLiteral("cannot listen on %1:%2: %3").arg(address.toString()).arg(port).arg(guard->errorString());
        delete guard;
        return core::Error::make(core::ErrorCode::Misconfigured, message);
    }
    d->guard = guard;
    {
        std::lock_guard set(d->replyTarget->mutex);
        d->replyTarget->guard = guard;
    }
    d->backend->bind(guard); // reparents the guard to the backend
    qCInfo(lcHttp).noquote() << "listening on" << address.toString() + u':' + QString::number(guard->serverPort());
    return guard->serverPort();
}

quint16 HttpServer::port() const
{
    return d->guard ? d->guard->serverPort() : 0;
}

bool HttpServer::drain(std::chrono::milliseconds timeout)
{
    QDeadlineTimer deadline(timeout);
    d->draining = true;
    if (d->guard)
        d->guard->close();
    d->waitForLanes(int(std::max<qint64>(0, deadline.remainingTime())));
    // Let the continuations write the replies of what just finished.
    while (d->inFlight->load() > 0 && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    const bool finished = d->inFlight->load() == 0;
    if (d->guard) {
        // Push what is buffered to the kernel before closing.
        const auto sockets = d->guard->findChildren<QTcpSocket *>();
        for (QTcpSocket *s : sockets)
            s->flush();
        d->guard->closeAllConnections();
    }
    qCInfo(lcHttp) << "drained:" << (finished ? "all requests finished" : "requests still running at the deadline");
    return finished;
}

int HttpServer::setTokens(Authenticator authenticator)
{
    d->authenticator = std::move(authenticator);
    const int closed = d->streams.closeRevoked([this](const QByteArray &tokenSha256) {
        const auto principal = d->authenticator.principalForSha256(tokenSha256);
        return principal && int(principal->role) >= int(d->webSocketRole);
    });
    if (d->streamsRevoked && closed > 0)
        d->streamsRevoked->add(quint64(closed));
    return closed;
}

void HttpServer::setMaxStreamsPerToken(int maxStreamsPerToken)
{
    d->streams.setMaxPerToken(maxStreamsPerToken);
}

quint64 HttpServer::streamsRefusedTotal() const
{
    return d->streamsRefused.load(std::memory_order_relaxed);
}

ConnectionGuard::Stats HttpServer::connectionStats() const
{
    return d->guard ? d->guard->stats() : ConnectionGuard::Stats{};
}

quint64 HttpServer::authFailuresTotal() const
{
    return d->limiter.failuresTotal();
}

quint64 HttpServer::authRefusedTotal() const
{
    return d->limiter.refusedTotal();
}

quint64 HttpServer::laneRejectedTotal(Lane lane) const
{
    return d->lane(lane).rejectedTotal();
}

int HttpServer::requestsInFlight() const
{
    return d->inFlight->load();
}

} // namespace payonce::http
