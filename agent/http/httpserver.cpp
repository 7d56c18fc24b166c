#include "httpserver.h"

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

struct Segment {
    QString text; // literal text, or the placeholder's name
    bool placeholder = false;
};

// An endpoint's request counters by status class (lock-free once created) and latency.
struct EndpointMetrics {
    static constexpr std::array outcomes{"2xx", "3xx", "4xx", "5xx"};
    std::array<core::Counter *, outcomes.size()> byOutcome{};
    core::LatencyHistogram *duration = nullptr;

    EndpointMetrics(core::MetricsRegistry &registry, const QString &endpoint)
    {
        for (std::size_t i = 0; i < outcomes.size(); ++i)
            byOutcome[i] = &registry.counter(
                QStringLiteral("payonce_requests_total"),
                QStringLiteral("HTTP requests answered, by route pattern and status class"),
                {{QStringLiteral("endpoint"), endpoint},
                 {QStringLiteral("outcome"), QString::fromLatin1(outcomes[i])}});
        duration = &registry.histogram(QStringLiteral("payonce_request_duration_seconds"),
                                       QStringLiteral("Time from dispatch to the reply written, by route pattern"),
                                       {{QStringLiteral("endpoint"), endpoint}});
    }
    void record(int status, std::chrono::steady_clock::time_point started) const
    {
        const std::size_t index = std::size_t(std::clamp(status / 100 - 2, 0, int(outcomes.size()) - 1));
        byOutcome[index]->add();
        duration->observe(std::chrono::steady_clock::now() - started);
    }
};

struct Route {
    Method method;
    QString pattern;
    QList<Segment> segments;
    RouteOptions options;
    Handler handler;          ///< a route that answers when it returns
    DeferredHandler deferred; ///< or one that sends its reply through a ReplySink
    std::shared_ptr<const EndpointMetrics> metrics;
};

QList<Segment> parsePattern(const QString &pattern)
{
    QList<Segment> segments;
    const QStringList parts = pattern.split(u'/', Qt::SkipEmptyParts);
    for (const QString &part : parts) {
        if (part.size() > 2 && part.startsWith(u'<') && part.endsWith(u'>'))
            segments.append({part.mid(1, part.size() - 2), true});
        else
            segments.append({part, false});
    }
    return segments;
}

std::optional<Method> toMethod(QHttpServerRequest::Method method)
{
    using M = QHttpServerRequest::Method;
    switch (method) {
    case M::Get: return Method::Get;
    case M::Post: return Method::Post;
    case M::Put: return Method::Put;
    case M::Patch: return Method::Patch;
    case M::Delete: return Method::Delete;
    case M::Head: return Method::Head;
    case M::Options: return Method::Options;
    default: return std::nullopt;
    }
}

// W3C Trace Context: a well-formed traceparent continues its trace; anything else — absent
// or malformed — starts a new one, never an error.
TraceContext traceFor(const QByteArray &traceparent)
{
    return TraceContext::parse(traceparent).value_or(TraceContext::fresh());
}

// The field every log line written for a request carries (JSON lines: "trace_id").
constexpr QLatin1StringView kTraceIdField("trace_id");

void adoptTrace(HttpRequest &req, const TraceContext &trace)
{
    req.traceId = trace.traceId;
    req.traceParent = trace.child().header();
}

HttpReply invokeSafely(const Handler &handler, const HttpRequest &request)
{
    try {
        return handler(request);
    } catch (const std::exception &e) {
        qCCritical(lcHttp).noquote() << "handler for" << request.path << "threw:" << e.what() << "trace"
                                     << request.traceId;
    } catch (...) {
        qCCritical(lcHttp).noquote() << "handler for" << request.path << "threw"
                                     << "trace" << request.traceId;
    }
    return errorReply(QStringLiteral("internal"), QStringLiteral("internal error"));
}

void invokeSafely(const Route &route, const HttpRequest &request, const ReplySink &sink)
{
    if (route.handler) {
        sink.send(invokeSafely(route.handler, request));
        return;
    }
    try {
        route.deferred(request, sink);
        return;
    } catch (const std::exception &e) {
        qCCritical(lcHttp).noquote() << "handler for" << request.path << "threw:" << e.what() << "trace"
                                     << request.traceId;
    } catch (...) {
        qCCritical(lcHttp).noquote() << "handler for" << request.path << "threw"
                                     << "trace" << request.traceId;
    }
    sink.send(errorReply(QStringLiteral("internal"), QStringLiteral("internal error"))); // unless it sent already
}

struct ReplyContext {
    QString traceId;
    QString request; ///< "POST /api/v1/payments/confirm", for the access line
    QByteArray rejectionLayer;
    bool closeAfter = false;
    std::shared_ptr<const EndpointMetrics> metrics;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

void writeReply(QTcpSocket *socket, HttpReply reply, const ReplyContext &context, bool fromServer)
{
    const logging::ScopedFields traced(kTraceIdField, context.traceId);
    // Counted even when the client has gone: the request was handled all the same.
    if (context.metrics)
        context.metrics->record(reply.status, context.started);
    qCDebug(lcAccess).noquote() << context.request << reply.status
                                << std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::steady_clock::now() - context.started)
                                       .count()
                                << "us";
    if (!socket || socket->state() != QAbstractSocket::ConnectedState)
        return;
    if (fromServer && !context.rejectionLayer.isEmpty() && reply.layer().isEmpty())
        reply.setLayer(context.rejectionLayer);
    QByteArray out = "HTTP/1.1 " + QByteArray::number(reply.status) + ' ' + reasonPhrase(reply.status) + "\r\n";
    if (!reply.contentType.isEmpty())
        out += "Content-Type: " + reply.contentType + "\r\n";
    out += "Content-Length: " + QByteArray::number(reply.body.size()) + "\r\n";
    out += "X-Trace-Id: " + context.traceId.toLatin1() + "\r\n";
    for (const auto &h : std::as_const(reply.headers)) {
        if (h.first.compare("content-length", Qt::CaseInsensitive) == 0
            || h.first.compare("connection", Qt::CaseInsensitive) == 0)
            continue;
        out += h.first + ": " + h.second + "\r\n";
    }
    if (context.closeAfter)
        out += "Connection: close\r\n";
    out += "\r\n";
    out += reply.body;
    socket->write(out);
    if (context.closeAfter)
        socket->disconnectFromHost();
}

} // namespace

// Failed authentications and the limiter's refusals, for /metrics (lock-free once made).
struct AuthMetrics {
    core::Counter *missingToken = nullptr;
    core::Counter *unknownToken = nullptr;
    core::Counter *refused = nullptr;

    explicit AuthMetrics(core::MetricsRegistry &registry)
    {
        const QString failures = QStringLiteral("payonce_auth_failures_total");
        const QString failuresHelp = QStringLiteral(
            "Requests that needed a token and came without one (missing_token) or with one that "
            "names no configured token (unknown_token)");
        missingToken = &registry.counter(failures, failuresHelp,
                                         {{QStringLiteral("reason"), QStringLiteral("missing_token")}});
        unknownToken = &registry.counter(failures, failuresHelp,
                                         {{QStringLiteral("reason"), QStringLiteral("unknown_token")}});
        refused = &registry.counter(QStringLiteral("payonce_auth_refused_total"),
                                    QStringLiteral("Requests with a wrong token refused with 429 because their client "
                                                   "address failed authentication too often within the window"));
    }
};

struct HttpServer::Private {
    Options options;
    Authenticator authenticator;
    AuthFailureLimiter limiter;
    std::optional<AuthMetrics> authMetrics;
    QList<Route> routes;
    // Indexed by Lane; each waits for its handlers when destroyed.
    std::array<std::unique_ptr<ExecutionLane>, 3> lanes;
    Backend *backend = nullptr;
    ConnectionGuard *guard = nullptr;
    /// Where replies are posted, for as long as the guard lives: a deferred reply may be
    /// sent from another thread at any time, even while the server is being destroyed.
    struct ReplyTarget {
        std::mutex mutex;
        ConnectionGuard *guard = nullptr; ///< null once the server is going
    };
    std::shared_ptr<ReplyTarget> replyTarget = std::make_shared<ReplyTarget>();
    std::shared_ptr<std::atomic<int>> inFlight = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<const EndpointMetrics> unmatchedMetrics;
    bool draining = false;
    QString webSocketPath;
    Role webSocketRole = Role::Viewer;
    WebSocketHandler webSocketHandler;
    StreamRegistry streams;
    core::Counter *streamsOverCap = nullptr; // payonce_stream_refused_total{reason="per_token_cap"}
    core::Counter *streamsRevoked = nullptr; // payonce_stream_revoked_total
    std::atomic<quint64> streamsRefused{0};

    Private(const Options &o, Authenticator a)
        : options(o), authenticator(std::move(a)), limiter(o.authFailuresPerWindow, o.authFailureWindow),
          streams(o.maxStreamsPerToken)
    {
        lanes[std::size_t(Lane::General)] = std::make_unique<ExecutionLane>(Lane::General, o.workerThreads, -1);
        lanes[std::size_t(Lane::Callbacks)] = std::make_unique<ExecutionLane>(Lane::Callbacks, o.callbackLane.threads,
                                                                              o.callbackLane.queueLimit);
        lanes[std::size_t(Lane::Gateway)] = std::make_unique<ExecutionLane>(Lane::Gateway, o.gatewayLane.threads,
                                                                            o.gatewayLane.queueLimit);
    }
    ExecutionLane &lane(Lane which) { return *lanes[std::size_t(which)]; }
    void waitForLanes(int timeoutMs)
    {
        QDeadlineTimer deadline(timeoutMs < 0 ? QDeadlineTimer(QDeadlineTimer::Forever) : QDeadlineTimer(timeoutMs));
        for (const auto &l : lanes)
            l->pool().waitForDone(deadline.isForever() ? -1 : int(std::max<qint64>(0, deadline.remainingTime())));
    }

    void dispatch(const QHttpServerRequest &request, QTcpSocket *socket, QHttpServerResponder &&responder);
    /// The token check of a route: nullopt when `authorization` names a principal of at
    /// least minimumRole (set in *principal), else the refusal to send (429, 401 or 403).
    std::optional<HttpReply> authorize(const HttpRequest &req, QByteArrayView authorization, Role minimumRole,
                                       std::optional<Principal> *principal);
    /// The client the request is counted against (options.trustedProxies).
    QHostAddress clientAddressOf(const QHttpServerRequest &request) const
    {
        if (options.trustedProxies.isEmpty())
            return request.remoteAddress();
        QList<QByteArray> forwardedFor;
        const auto headers = request.headers();
        for (const auto &h : headers) {
            if (h.first.compare("x-forwarded-for", Qt::CaseInsensitive) == 0)
                forwardedFor.append(h.second);
        }
        return options.trustedProxies.clientAddress(request.remoteAddress(), forwardedFor);
    }
    /// An upgrade request: true when the upgrade may go on; otherwise the refusal is written.
    bool admitUpgrade(const QHttpServerRequest &request, QTcpSocket *socket);
};

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
    const logging::ScopedFields traced(kTraceIdField, req.traceId);

    const std::optional<Method> method = toMethod(request.method());
    ReplyContext context;
    context.metrics = unmatchedMetrics;
    context.traceId = req.traceId;
    context.request = (method ? methodName(*method) : QStringLiteral("OTHER")) + u' ' + req.path;
    context.closeAfter = draining || req.header("connection").compare("close", Qt::CaseInsensitive) == 0;

    // Match segment by segment on the encoded path, so "%2F" stays inside one segment; each
    // segment decoded once.
    QStringList parts = request.url().path(QUrl::FullyEncoded).split(u'/', Qt::SkipEmptyParts);
    for (QString &part : parts)
        part = QUrl::fromPercentEncoding(part.toUtf8());
    const Route *matched = nullptr;
    int matchedLiterals = -1;
    QHash<QString, QString> arguments;
    QStringList allowed;
    for (const Route &r : std::as_const(routes)) {
        if (r.segments.size() != parts.size())
            continue;
        QHash<QString, QString> args;
        int literals = 0;
        bool ok = true;
        for (qsizetype i = 0; i < parts.size() && ok; ++i) {
            const QString &decoded = parts.at(i);
            if (r.segments.at(i).placeholder) {
                ok = !decoded.isEmpty();
                args.insert(r.segments.at(i).text, decoded);
            } else {
                ok = decoded == r.segments.at(i).text;
                ++literals;
            }
        }
        if (!ok)
            continue;
        if (!method || r.method != *method) {
            if (!allowed.contains(methodName(r.method)))
                allowed << methodName(r.method);
            continue;
        }
        if (literals > matchedLiterals) {
            matched = &r;
            matchedLiterals = literals;
            arguments = args;
        }
    }

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
    req.pathArguments = arguments;
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

    ExecutionLane &executor = lane(matched->options.lane);
    if (!executor.tryAdmit()) {
        qCWarning(lcHttp).noquote() << "lane" << laneName(executor.lane()) << "is full (" << executor.threads()
                                    << "threads," << executor.queueLimit() << "queued): 503 for" << context.request
                                    << "trace" << req.traceId;
        HttpReply reply = matched->options.busyReply
                              ? matched->options.busyReply()
                              : errorReply(
                                  QStringLiteral("server_busy"),
                                  QStringLiteral("the server is busy with requests like this one; retry shortly"));
        reply.setHeader(QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1"));
        writeReply(socket, std::move(reply), context, true);
        return;
    }

    // The safe responder pattern (docs/architecture.md, "QtHttpServer 6.4"): the reply goes
    // back to the event loop as an event posted to the guard, and is written only if the
    // socket still exists then; nothing on a worker touches the socket. Not QFuture::then
    // with the socket as context: in Qt 6.4 a continuation attached while its task is
    // finishing can run twice, and the second run crashed the agent (SIGSEGV in
    // QFutureInterfaceBase::reportStarted under a scrape load).
    auto responderPtr = std::make_shared<QHttpServerResponder>(std::move(responder));
    // Counts the request until its reply has been written or dropped with the socket.
    auto inFlightToken = std::shared_ptr<void>((inFlight->fetch_add(1), nullptr),
                                               [counter = inFlight](void *) { counter->fetch_sub(1); });
    guard->requestStarted(socket);
    // Sent once, from whichever thread has the reply (the handler's, or a deferred route's
    // later one). Everything the reply needs moves into the event, so the responder is
    // destroyed on the event loop's thread. drain() waits for every reply in flight,
    // deferred ones too; one sent after the server has gone is dropped.
    const ReplySink sink(
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
    executor.pool().start([route = matched, req, &executor, sink]() {
        {
            // Every line the handler logs on this worker names the request's trace.
            const logging::ScopedFields tracedOnWorker(kTraceIdField, req.traceId);
            invokeSafely(*route, req, sink); // routes stay as they are once listening
        }
        executor.finished(); // the place is the handler's, whether or not its client waits
    });
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
        options.metrics->addReader(
            QStringLiteral("payonce_http_connections_closed_total"),
            QStringLiteral("Connections the agent closed, by reason (idle keep-alive, a head not complete in time)"),
            core::MetricType::Counter, [d = d.get()] {
                const ConnectionGuard::Stats s = d->guard ? d->guard->stats() : ConnectionGuard::Stats{};
                return QList<core::MetricSample>{
                    {{{QStringLiteral("reason"), QStringLiteral("idle")}}, double(s.idleCloses)},
                    {{{QStringLiteral("reason"), QStringLiteral("header_timeout")}}, double(s.headerTimeouts)}};
            });
        options.metrics->addReader(
            QStringLiteral("payonce_http_connections_refused_total"),
            QStringLiteral("Connections the guard answered with an error and closed, by reason"),
            core::MetricType::Counter, [d = d.get()] {
                const ConnectionGuard::Stats s = d->guard ? d->guard->stats() : ConnectionGuard::Stats{};
                auto sample = [](const char *reason, quint64 value) {
                    return core::MetricSample{{{QStringLiteral("reason"), QLatin1String(reason)}}, double(value)};
                };
                return QList<core::MetricSample>{
                    sample("payload_too_large", s.payloadTooLarge),      sample("length_required", s.lengthRequired),
                    sample("header_too_large", s.headerTooLarge),        sample("malformed", s.malformed),
                    sample("too_many_per_address", s.perAddressRefused), sample("too_many_in_total", s.totalRefused)};
            });
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
        Route{method, pattern, parsePattern(pattern), options, std::move(handler), {}, std::move(metrics)});
}

void HttpServer::routeDeferred(Method method, const QString &pattern, const RouteOptions &options,
                               DeferredHandler handler)
{
    Q_ASSERT(handler && !options.onEventLoop);
    std::shared_ptr<const EndpointMetrics> metrics;
    if (d->options.metrics)
        metrics = std::make_shared<EndpointMetrics>(*d->options.metrics, pattern);
    d->routes.append(
        Route{method, pattern, parsePattern(pattern), options, {}, std::move(handler), std::move(metrics)});
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
