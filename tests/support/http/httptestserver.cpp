// payonce-http-testserver: hosts payonce::http::HttpServer with test routes for the HTTP
// infrastructure tests (tst_httpguard, tst_httpauth, tst_nginx). Prints "listening <port>"
// once it accepts connections; on SIGTERM it drains and exits 0.
//
//   --port N (0: any)  --idle-ms N  --header-ms N  --per-address N  --max-connections N
//   --max-body N  --workers N  --callback-threads N  --callback-queue N
// Tokens: "viewer-token" (viewer) and "operator-token" (operator).
#include "http/authenticator.h"
#include "http/errormapping.h"
#include "http/httpserver.h"
#include "http/jsonbody.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSocketNotifier>
#include <QThread>
#include <QThreadPool>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <unistd.h>

using namespace payonce;

namespace {

int g_signalPipe[2] = {-1, -1};

void onSignal(int)
{
    const char byte = 1;
    [[maybe_unused]] const auto written = ::write(g_signalPipe[1], &byte, 1);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption port(QStringLiteral("port"), QStringLiteral("port"), QStringLiteral("n"),
                                  QStringLiteral("0"));
    const QCommandLineOption idle(QStringLiteral("idle-ms"), QStringLiteral("idle timeout"), QStringLiteral("n"),
                                  QStringLiteral("60000"));
    const QCommandLineOption header(QStringLiteral("header-ms"), QStringLiteral("header timeout"), QStringLiteral("n"),
                                    QStringLiteral("10000"));
    const QCommandLineOption perAddress(QStringLiteral("per-address"), QStringLiteral("cap"), QStringLiteral("n"),
                                        QStringLiteral("2000"));
    const QCommandLineOption maxConnections(QStringLiteral("max-connections"), QStringLiteral("cap"),
                                            QStringLiteral("n"), QStringLiteral("4000"));
    const QCommandLineOption maxBody(QStringLiteral("max-body"), QStringLiteral("bytes"), QStringLiteral("n"),
                                     QStringLiteral("65536"));
    const QCommandLineOption workers(QStringLiteral("workers"), QStringLiteral("threads"), QStringLiteral("n"),
                                     QStringLiteral("8"));
    const QCommandLineOption callbackThreads(QStringLiteral("callback-threads"), QStringLiteral("threads"),
                                             QStringLiteral("n"), QStringLiteral("4"));
    const QCommandLineOption callbackQueue(QStringLiteral("callback-queue"), QStringLiteral("requests"),
                                           QStringLiteral("n"), QStringLiteral("256"));
    parser.addOptions(
        {port, idle, header, perAddress, maxConnections, maxBody, workers, callbackThreads, callbackQueue});
    parser.process(app);

    http::HttpServer::Options options;
    options.limits.idleTimeout = std::chrono::milliseconds(parser.value(idle).toLongLong());
    options.limits.headerTimeout = std::chrono::milliseconds(parser.value(header).toLongLong());
    options.limits.maxConnectionsPerAddress = parser.value(perAddress).toInt();
    options.limits.maxConnections = parser.value(maxConnections).toInt();
    options.limits.maxBodyBytes = parser.value(maxBody).toLongLong();
    options.workerThreads = parser.value(workers).toInt();
    options.callbackLane.threads = parser.value(callbackThreads).toInt();
    options.callbackLane.queueLimit = parser.value(callbackQueue).toInt();
    options.authFailuresPerWindow = 5;

    QList<config::AuthToken> tokens{
        {QStringLiteral("vera"), QStringLiteral("viewer"),
         config::Secret(QString::fromLatin1(http::sha256Hex("viewer-token")))},
        {QStringLiteral("otto"), QStringLiteral("operator"),
         config::Secret(QString::fromLatin1(http::sha256Hex("operator-token")))},
    };
    http::HttpServer server(options, http::Authenticator(tokens));
    server.addHealthRoutes([] { return http::Readiness{true, false, {}}; });
    server.route(http::Method::Get, QStringLiteral("/slow"), http::Role::None, [](const http::HttpRequest &request) {
        const int ms = request.queryItem(QStringLiteral("ms")).toInt();
        QThread::msleep(ulong(std::clamp(ms, 0, 60'000)));
        return http::HttpReply::ok(QJsonObject{{QStringLiteral("slept_ms"), ms}});
    });
    // Busy for a random 0..us microseconds: handlers that finish while the event loop is
    // still handing their request to the pool (the race of a reply posted back too early).
    server.route(http::Method::Get, QStringLiteral("/spin"), http::Role::None, [](const http::HttpRequest &request) {
        const int us = std::clamp(request.queryItem(QStringLiteral("us")).toInt(), 0, 1'000'000);
        const auto until = std::chrono::steady_clock::now()
                           + std::chrono::microseconds(us ? QRandomGenerator::global()->bounded(us + 1) : 0);
        while (std::chrono::steady_clock::now() < until) {
        }
        return http::HttpReply::ok(QJsonObject{{QStringLiteral("spun_us_at_most"), us}});
    });
    server.route(http::Method::Post, QStringLiteral("/echo"), http::Role::None, [](const http::HttpRequest &request) {
        const auto body = http::parseJsonObject(request.body);
        if (!body)
            return http::errorReply(body.error());
        return http::HttpReply::ok(
            QJsonObject{{QStringLiteral("echo"), body.value()}, {QStringLiteral("trace_id"), request.traceId}});
    });
    server.route(http::Method::Get, QStringLiteral("/viewer-only"), http::Role::Viewer,
                 [](const http::HttpRequest &request) {
                     return http::HttpReply::ok(QJsonObject{{QStringLiteral("actor"), request.principal->name}});
                 });
    http::RouteOptions operatorOnly;
    operatorOnly.minimumRole = http::Role::Operator;
    operatorOnly.rejectionLayer = QByteArrayLiteral("rejected");
    server.route(http::Method::Post, QStringLiteral("/operator-only"), operatorOnly,
                 [](const http::HttpRequest &request) {
                     return http::HttpReply::ok(QJsonObject{{QStringLiteral("actor"), request.principal->name}})
                         .setLayer(QByteArrayLiteral("none"));
                 });
    // Deferred routes on the callback lane: /deferred answers `ms` later from another thread
    // (its lane thread free meanwhile), /deferred-lost drops its sink without answering,
    // /callback-lane answers at once.
    http::RouteOptions callbackLane;
    callbackLane.lane = http::Lane::Callbacks;
    server.routeDeferred(http::Method::Get, QStringLiteral("/deferred"), callbackLane,
                         [](const http::HttpRequest &request, const http::ReplySink &sink) {
                             const int ms = std::clamp(request.queryItem(QStringLiteral("ms")).toInt(), 0, 60'000);
                             QThreadPool::globalInstance()->start([sink, ms] {
                                 QThread::msleep(ulong(ms));
                                 sink.send(http::HttpReply::ok(QJsonObject{{QStringLiteral("deferred_ms"), ms}}));
                             });
                         });
    server.routeDeferred(http::Method::Get, QStringLiteral("/deferred-lost"), callbackLane,
                         [](const http::HttpRequest &, const http::ReplySink &) {});
    // /memory-first on the callback lane, with a memory-first try on the event loop:
    // ?from=memory is answered there, ?from=throw throws there; anything else goes to the
    // lane, whose handler holds its thread `ms` before answering.
    http::RouteOptions memoryFirstLane = callbackLane;
    memoryFirstLane.rejectionLayer = QByteArrayLiteral("rejected");
    server.routeDeferred(
        http::Method::Get, QStringLiteral("/memory-first"), memoryFirstLane,
        [](const http::HttpRequest &request, const http::ReplySink &sink) {
            const QString from = request.queryItem(QStringLiteral("from"));
            if (from == u"throw")
                throw std::runtime_error("memory-first handler asked to throw");
            if (from != u"memory")
                return false;
            sink.send(http::HttpReply::ok(QJsonObject{{QStringLiteral("answered_by"), QStringLiteral("memory")}}));
            return true;
        },
        [](const http::HttpRequest &request, const http::ReplySink &sink) {
            QThread::msleep(ulong(std::clamp(request.queryItem(QStringLiteral("ms")).toInt(), 0, 60'000)));
            sink.send(http::HttpReply::ok(QJsonObject{{QStringLiteral("answered_by"), QStringLiteral("lane")}}));
        });
    server.route(http::Method::Get, QStringLiteral("/callback-lane"), callbackLane, [](const http::HttpRequest &) {
        return http::HttpReply::ok(QJsonObject{{QStringLiteral("lane"), QStringLiteral("callbacks")}});
    });
    server.route(http::Method::Get, QStringLiteral("/api/v1/orders/<order_no>"), http::Role::None,
                 [](const http::HttpRequest &request) {
                     return http::HttpReply::ok(
                         QJsonObject{{QStringLiteral("order_no"), request.pathArgument(QStringLiteral("order_no"))}});
                 });

    const auto listening = server.listen(QHostAddress::LocalHost, quint16(parser.value(port).toUInt()));
    if (!listening) {
        std::fprintf(stderr, "%s\n", qPrintable(listening.error().internalMessage));
        return 2;
    }

    if (::pipe(g_signalPipe) != 0)
        return 3;
    std::signal(SIGTERM, onSignal);
    std::signal(SIGINT, onSignal);
    QSocketNotifier notifier(g_signalPipe[0], QSocketNotifier::Read);
    QObject::connect(&notifier, &QSocketNotifier::activated, &app, [&] {
        char byte = 0;
        [[maybe_unused]] const auto got = ::read(g_signalPipe[0], &byte, 1);
        notifier.setEnabled(false);
        const bool finished = server.drain(std::chrono::seconds(5));
        const auto stats = server.connectionStats();
        std::printf("drained %s; accepted %llu, 413 %llu, 411 %llu, header timeouts %llu, idle closes %llu, "
                    "per-address refused %llu, total refused %llu, auth failures %llu, 429 %llu\n",
                    finished ? "all" : "NOT all", stats.accepted, stats.payloadTooLarge, stats.lengthRequired,
                    stats.headerTimeouts, stats.idleCloses, stats.perAddressRefused, stats.totalRefused,
                    server.authFailuresTotal(), server.authRefusedTotal());
        std::fflush(stdout);
        QCoreApplication::exit(finished ? 0 : 1);
    });

    std::printf("listening %u\n", unsigned(*listening));
    std::fflush(stdout);
    return app.exec();
}
