#pragma once

// HttpServer's state, shared by httpserver.cpp and its route table, reply writer and
// metrics (the _p files beside it).

#include "endpointmetrics_p.h"
#include "httpserver.h"
#include "replywriter_p.h"
#include "routetable_p.h"
#include "streamregistry.h"

#include <QDeadlineTimer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace payonce::http {

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
    void runOnLane(const Route &route, HttpRequest req, QTcpSocket *socket, QHttpServerResponder &&responder,
                   ReplyContext context);
    HttpReply busyReplyOf(const Route &route, const ReplyContext &context, const QString &traceId);
    ReplySink replySinkFor(QTcpSocket *socket, QHttpServerResponder &&responder, const ReplyContext &context);
    /// The request as handlers see it: client address, decoded path, lower-case header names, trace.
    HttpRequest requestOf(const QHttpServerRequest &request) const;
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

} // namespace payonce::http
