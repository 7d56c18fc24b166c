#pragma once

#include "authenticator.h"
#include "clientaddress.h"
#include "connectionguard.h"
#include "executionlane.h"
#include "httptypes.h"
#include "replysink.h"

#include "core/common/result.h"
#include "shared/streammessage.h"

#include <QHostAddress>
#include <QObject>

#include <chrono>
#include <functional>
#include <memory>

class QWebSocket;

namespace payonce::core {
class MetricsRegistry;
}

namespace payonce::http {

/// Where routes report what an operator did (breaker forced, callback mode changed) for
/// the live stream; called on a worker thread; empty: nobody listens.
using EventPublisher = std::function<void(const StreamEvent &)>;

/// How a route is guarded and answered.
struct RouteOptions {
    /// Role::None: no token needed (none is looked at). Otherwise `Authorization: Bearer`
    /// must name a token of at least this role: 401 unauthenticated / 403 forbidden (naming
    /// the role); a wrong token from a client address that failed too often is 429.
    Role minimumRole = Role::None;
    /// For payment and callback routes, whose every reply names a layer: the
    /// X-Payonce-Layer value of replies the server makes itself for this route (401, 403,
    /// 429, 500) — normally "rejected". Replies from the handler keep the layer the
    /// handler set (HttpReply::setLayer()). Empty: no layer header added.
    QByteArray rejectionLayer;
    /// Run the handler on the event-loop thread instead of the pool. Only for handlers that
    /// never block (liveness): they keep answering when the pool is saturated.
    bool onEventLoop = false;
    /// The threads the handler runs on (Options::callbackLane, gatewayLane). When the
    /// lane's queue is full the request is answered at once with busyReply (default: 503
    /// server_busy), with Retry-After, and its handler never runs.
    Lane lane = Lane::General;
    /// The answer when the lane is full, for callers with a contract of their own (a
    /// platform's FAIL, so it sends the notification again). Status and body as given;
    /// the server adds Retry-After.
    std::function<HttpReply()> busyReply;
};

/// One registered route as --list-routes prints it: the method, the pattern with its
/// placeholders ("/api/v1/orders/<order_no>"), the role it needs, and whether a GET to it
/// is the WebSocket upgrade.
struct RouteInfo {
    Method method = Method::Get;
    QString pattern;
    Role minimumRole = Role::None;
    bool webSocket = false;
};

/// A route that needs minimumRole and waits on a payment platform (Lane::Gateway).
inline RouteOptions gatewayRoute(Role minimumRole)
{
    RouteOptions options;
    options.minimumRole = minimumRole;
    options.lane = Lane::Gateway;
    return options;
}

/// What /readyz reports: the app passes a callback that pings the database and asks the
/// key store whether it is degraded. Runs on a worker thread.
struct Readiness {
    bool databaseReachable = true;
    bool keyStoreDegraded = false;
    QString detail; ///< why not ready (for the body), optional
};
using ReadinessCheck = std::function<Readiness()>;

/// The agent's HTTP server: QtHttpServer 6.4 (through QAbstractHttpServer) behind a
/// ConnectionGuard, with a bounded worker pool, path-pattern routing and bearer-token
/// roles. Routes are registered before listen() and not changed afterwards.
///
/// A request is copied into an HttpRequest on the event-loop thread; the handler runs on
/// its route's lane (RouteOptions::lane: the general pool of workerThreads, or the bounded
/// callback and gateway lanes); the reply is posted to the socket's thread as an event and
/// written there only if the socket still exists, so a client that disconnects mid-request
/// only has its reply dropped — the handler's work still completes (it may have written to
/// the database), its answer is discarded. A deferred route (routeDeferred) sends its
/// reply whenever it has it, from any thread, by the same event. Unknown path: 404 not_found; known path, other
/// method: 405 method_not_allowed with Allow. Every reply carries X-Trace-Id (from a W3C
/// traceparent header, else generated).
///
/// Lives on the thread that created it (the main thread); route(), listen() and drain()
/// are called there.
class HttpServer : public QObject {
    Q_OBJECT
public:
    /// A lane's threads and how many handlers may wait for them beyond those.
    struct LaneLimits {
        int threads;
        int queueLimit;
    };

    struct Options {
        ConnectionGuard::Limits limits;
        int workerThreads = 8; ///< the general lane (its queue is unbounded)
        /// Platform notifications: quick database work that must answer within the
        /// platform's ~5 s timeout, whatever the gateways do.
        LaneLimits callbackLane{4, 256};
        /// Requests that wait on a payment platform (seconds, with retries): a slow
        /// gateway fills these threads, not the others.
        LaneLimits gatewayLane{8, 512};
        /// Wrong tokens a client address may send within the window before its wrong
        /// tokens are answered 429 (AuthFailureLimiter); valid tokens always pass.
        int authFailuresPerWindow = 10;
        std::chrono::milliseconds authFailureWindow = std::chrono::minutes(1);
        /// Whose X-Forwarded-For names the client (http.trusted_proxies); empty: the peer is.
        TrustedProxies trustedProxies;
        /// Open streams one token may hold (stream.max_per_token); one more is refused at
        /// its handshake with 429 too_many_streams.
        int maxStreamsPerToken = 8;
        /// When set, every reply is counted here — the one place requests are counted:
        /// payonce_requests_total{endpoint,outcome} (endpoint: the route's pattern, or
        /// "unmatched"; outcome: the status class "2xx"…"5xx") and
        /// payonce_request_duration_seconds{endpoint}, from dispatch to the reply written.
        /// Must outlive the server.
        core::MetricsRegistry *metrics = nullptr;
    };

    HttpServer(const Options &options, Authenticator authenticator, QObject *parent = nullptr);
    ~HttpServer() override;

    /// Registers a handler for method + path pattern. A pattern is literal segments and
    /// placeholders: "/api/v1/orders/<order_no>" matches "/api/v1/orders/ORD1" with
    /// pathArgument("order_no") == "ORD1" (one whole, non-empty, percent-decoded segment).
    /// A literal segment wins over a placeholder; the first registered wins among equals.
    void route(Method method, const QString &pattern, Role minimumRole, Handler handler);
    void route(Method method, const QString &pattern, const RouteOptions &options, Handler handler);
    /// The same for a handler that may send its reply after it returns (ReplySink): its
    /// lane's thread is free for the next request meanwhile. Not with options.onEventLoop.
    void routeDeferred(Method method, const QString &pattern, const RouteOptions &options, DeferredHandler handler);
    /// The same with a memory-first try (MemoryFirstHandler): run on the event loop for each
    /// request before it takes a place on the lane; only what it declines reaches `handler`
    /// (or the lane's busy reply). What it takes never waits for a lane's thread.
    void routeDeferred(Method method, const QString &pattern, const RouteOptions &options,
                       MemoryFirstHandler fromMemory, DeferredHandler handler);

    /// Receives an accepted WebSocket (on the event-loop thread) and takes ownership.
    using WebSocketHandler = std::function<void(std::unique_ptr<QWebSocket>)>;

    /// GET `path` upgraded to WebSocket on this server's port (docs/architecture.md, "QtHttpServer 6.4"
    /// item 4). The token comes as `Authorization: Bearer` on the upgrade request (never in
    /// the query, where every log of request lines would keep it) and must have at least
    /// minimumRole, and the token may not hold maxStreamsPerToken streams already:
    /// otherwise the upgrade is refused right at the handshake — the usual 401 / 403 / 429
    /// reply, or 429 too_many_streams, is written instead of 101 and the connection
    /// closed, so no WebSocket is ever made for it. A request to `path` that is not an
    /// upgrade gets 426 upgrade_required; an upgrade to any other path, 404. One WebSocket path.
    void webSocketRoute(const QString &path, Role minimumRole, WebSocketHandler handler);

    /// GET /healthz → 200 {"status":"up"} (on the event loop); GET /readyz → 200
    /// {"status":"ready","redis":"ok"|"degraded"} or 503 {"status":"unready","redis":…,
    /// "reason":…} from check (on the pool). No token needed.
    void addHealthRoutes(ReadinessCheck check);

    /// Replaces the tokens (SIGHUP): requests from now on are checked against these, and
    /// every open stream whose token is gone — or now has a role below the stream's — is
    /// closed (WebSocket close 1008, "token revoked"). Returns how many were closed.
    int setTokens(Authenticator authenticator);
    void setMaxStreamsPerToken(int maxStreamsPerToken);
    /// Upgrades refused because their token held maxStreamsPerToken streams already.
    quint64 streamsRefusedTotal() const;

    /// Listens on address:port (port 0: any free port); returns the port.
    core::Result<quint16> listen(const QHostAddress &address, quint16 port);
    quint16 port() const;

    /// Graceful stop (SIGTERM): closes the listener, lets requests in flight finish and
    /// their replies be written (processing events), then closes every connection. True
    /// when everything finished within timeout. Not reversible.
    bool drain(std::chrono::milliseconds timeout);

    /// Every route registered so far, in registration order (the WebSocket path included,
    /// marked), so the contract in docs/openapi.yaml can be compared with what is served.
    QList<RouteInfo> routes() const;

    ConnectionGuard::Stats connectionStats() const;
    quint64 authFailuresTotal() const;
    quint64 authRefusedTotal() const;
    /// Requests refused with 503 because the lane's queue was full.
    quint64 laneRejectedTotal(Lane lane) const;
    int requestsInFlight() const;

private:
    class Backend;
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace payonce::http
