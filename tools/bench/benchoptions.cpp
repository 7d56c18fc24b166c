#include "benchoptions.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace payonce::bench {

namespace {
[[noreturn]] void refuse(const QString &message)
{
    std::fprintf(stderr, "payonce-bench: %s\n", qPrintable(message));
    std::exit(2);
}
} // namespace

BenchOptions parseBenchOptions(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Drives a payonce-agent it starts itself (with payonce-sim as the WeChat Pay gateway and a throwaway\n"
        "database) over keep-alive HTTP and measures, in one run: confirms, unique and duplicate WeChat\n"
        "notifications, and their limits — the callback's SQL issued directly, GET /healthz, Redis PING."));
    parser.addHelpOption();
    const QCommandLineOption db(QStringLiteral("db"), QStringLiteral("sqlite | postgresql | mariadb (default sqlite)."),
                                QStringLiteral("DIALECT"), QStringLiteral("sqlite"));
    const QCommandLineOption connections(QStringLiteral("connections"),
                                         QStringLiteral("Keep-alive connections and SQL/Redis threads (default 64)."),
                                         QStringLiteral("N"), QStringLiteral("64"));
    const QCommandLineOption threads(QStringLiteral("client-threads"),
                                     QStringLiteral("Threads of the HTTP load client (default 2)."),
                                     QStringLiteral("N"), QStringLiteral("2"));
    const QCommandLineOption duration(QStringLiteral("duration"),
                                      QStringLiteral("Seconds per timed phase (default 20)."), QStringLiteral("S"),
                                      QStringLiteral("20"));
    const QCommandLineOption requests(
        QStringLiteral("requests"), QStringLiteral("Operations per phase instead of a duration."), QStringLiteral("N"));
    const QCommandLineOption redis(QStringLiteral("redis"),
                                   QStringLiteral("embedded | server: the agent's key store (default embedded)."),
                                   QStringLiteral("KIND"), QStringLiteral("embedded"));
    const QCommandLineOption skus(QStringLiteral("skus"),
                                  QStringLiteral("Orders spread over N SKUs (default 1000; 1: every order on one "
                                                 "stock row, a flash sale)."),
                                  QStringLiteral("N"), QStringLiteral("1000"));
    const QCommandLineOption slow(QStringLiteral("slow-stream-client"),
                                  QStringLiteral("Also measure unique callbacks with a WebSocket client on "
                                                 "/api/v1/stream that never reads."));
    const QCommandLineOption interval(QStringLiteral("stream-interval-ms"),
                                      QStringLiteral("The agent's stream.interval_ms (default 5)."),
                                      QStringLiteral("MS"), QStringLiteral("5"));
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Also write the figures as JSON to FILE."),
                                  QStringLiteral("FILE"));
    const QCommandLineOption perf(
        QStringLiteral("perf"),
        QStringLiteral("Profile the agent with perf record -g during (a) and (b): DIR/<phase>.data "
                       "and DIR/<phase>.txt (the hottest frames). Perturbs the figures."),
        QStringLiteral("DIR"));
    const QCommandLineOption storm(QStringLiteral("memory-storm"),
                                   QStringLiteral("Instead: a callback storm of S seconds, the agent's RSS sampled "
                                                  "every 5 s after a warm-up (scripts/bench-memory.sh)."),
                                   QStringLiteral("S"));
    const QCommandLineOption preloadDeliveries(
        QStringLiteral("preload-deliveries"),
        QStringLiteral("After the phases: N delivery rows written into the database (with --preload-orders paid "
                       "orders), unique and duplicate callbacks measured again against them, then a day of "
                       "deliveries past retention pruned while duplicates run."),
        QStringLiteral("N"));
    const QCommandLineOption preloadOrders(QStringLiteral("preload-orders"),
                                           QStringLiteral("Paid orders in the preloaded history (default: a tenth of "
                                                          "--preload-deliveries)."),
                                           QStringLiteral("M"));
    const QCommandLineOption agentArg(QStringLiteral("agent-arg"),
                                      QStringLiteral("An argument for the agent, repeatable (e.g. "
                                                     "--agent-arg=--http-callback-threads=16)."),
                                      QStringLiteral("ARG"));
    parser.addOptions({db, connections, threads, duration, requests, redis, skus, slow, interval, json, perf, storm,
                       preloadDeliveries, preloadOrders, agentArg});
    parser.process(arguments);

    BenchOptions options;
    const QString dialect = parser.value(db);
    if (dialect == u"sqlite")
        options.dialect = testsupport::Dialect::Sqlite;
    else if (dialect == u"postgresql")
        options.dialect = testsupport::Dialect::PostgreSql;
    else if (dialect == u"mariadb")
        options.dialect = testsupport::Dialect::MariaDb;
    else
        refuse(QStringLiteral("--db must be sqlite, postgresql or mariadb"));
    auto positive = [&](const QCommandLineOption &option) {
        bool ok = false;
        const qint64 value = parser.value(option).toLongLong(&ok);
        if (!ok || value <= 0)
            refuse(QStringLiteral("--%1 must be a positive integer").arg(option.names().constFirst()));
        return value;
    };
    options.connections = int(positive(connections));
    options.clientThreads = int(positive(threads));
    options.duration = std::chrono::seconds(positive(duration));
    if (parser.isSet(requests))
        options.requests = positive(requests);
    const QString store = parser.value(redis);
    if (store != u"embedded" && store != u"server")
        refuse(QStringLiteral("--redis must be embedded or server"));
    options.redisServer = store == u"server";
    options.skus = int(positive(skus));
    options.slowStreamClient = parser.isSet(slow);
    options.streamIntervalMs = int(positive(interval));
    options.agentArguments = parser.values(agentArg);
    options.jsonPath = parser.value(json);
    options.perfDir = parser.value(perf);
    if (parser.isSet(storm))
        options.memoryStorm = std::chrono::seconds(positive(storm));
    if (parser.isSet(preloadDeliveries))
        options.preloadDeliveries = positive(preloadDeliveries);
    if (parser.isSet(preloadOrders))
        options.preloadOrders = positive(preloadOrders);
    else
        options.preloadOrders = std::max<qint64>(options.preloadDeliveries / 10, options.preloadDeliveries > 0 ? 1 : 0);
    if (options.preloadOrders > 0 && options.preloadDeliveries == 0)
        refuse(QStringLiteral("--preload-orders needs --preload-deliveries"));
    if (options.preloads() && options.memoryStorm.count() > 0)
        refuse(QStringLiteral("--preload-deliveries and --memory-storm are separate runs"));
    return options;
}

} // namespace payonce::bench
