#include "agentparts_p.h"

namespace payonce::app {

using core::Error;
using core::ErrorCode;

core::Result<void> AgentRuntime::Parts::startHttp()
{
    openConfirm();
    if (auto made = makeServer(); !made)
        return made;
    openStream();
    registerOperationRoutes();
    if (auto listening = listen(); !listening)
        return listening;
    startHousekeeping();
    return {};
}

void AgentRuntime::Parts::openConfirm()
{
    core::ConfirmPipelineOptions confirmOptions;
    confirmOptions.lockTtl = confirmLockTtl();
    const QString callbackBase = callbackBaseUrl();
    if (config.publicBaseUrl.isEmpty() && !config.sim.enabled
        && (config.wechat.isConfigured() || config.alipay.isConfigured()))
        qCWarning(lcApp).noquote() << QStringLiteral("public_base_url is not set: the platforms are told to notify %1, "
                                                     "which only works when they can reach the listen address")
                                          .arg(callbackBase);
    confirmOptions.notifyUrlWeChat = callbackBase + QStringLiteral("/api/v1/callbacks/wechat");
    confirmOptions.notifyUrlAlipay = callbackBase + QStringLiteral("/api/v1/callbacks/alipay");
    setup = std::make_unique<core::SetupService>(*orders);
    tokens = std::make_unique<core::TokenIssuer>(*payments, keyStore->tokens());
    confirm = std::make_unique<core::ConfirmPipeline>(*idempotency, &keyStore->idempotency(), keyStore->tokens(),
                                                      keyStore->locks(), *payments, gatewayLookup(), clock,
                                                      confirmOptions);
}

/// The server with its limits, the metrics it serves, health and the payment API.
core::Result<void> AgentRuntime::Parts::makeServer()
{
    http::HttpServer::Options options;
    options.workerThreads = config.workerThreads;
    options.limits.idleTimeout = std::chrono::milliseconds(config.http.idleTimeoutMs);
    options.limits.headerTimeout = std::chrono::milliseconds(config.http.headerTimeoutMs);
    options.limits.maxConnections = config.http.maxConnections;
    options.limits.maxConnectionsPerAddress = config.http.maxConnectionsPerAddress;
    QString badProxy;
    const auto trustedProxies = http::TrustedProxies::parse(config.http.trustedProxies, &badProxy);
    if (!trustedProxies)
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("http.trusted_proxies: \"%1\" is not an address or address/prefix "
                                          "(127.0.0.1/32, ::1/128)")
                               .arg(badProxy));
    options.trustedProxies = *trustedProxies;
    options.maxStreamsPerToken = config.stream.maxPerToken;
    options.callbackLane = {config.http.callbackThreads, config.http.callbackQueue};
    options.gatewayLane = {config.http.gatewayThreads, config.http.gatewayQueue};
    // maxBodyBytes stays at the contract's 64 KiB (docs/openapi.yaml), not configurable.
    // Live metrics: the server counts requests; GET /metrics (no token, like
    // /healthz) renders them with what the pipelines, breakers, key store and database say.
    options.metrics = &metrics;
    server = std::make_unique<http::HttpServer>(options, http::Authenticator(config.authTokens));
    operationalCounts = std::make_unique<sql::SqlOperationalCounts>(*database);
    countsCache = std::make_unique<OperationalCountsCache>(*operationalCounts);
    registerAgentMetrics(metrics, {confirm.get(), callbacks.get(), breakers.get(), keyStore.get(), countsCache.get(),
                                   retention.get(), verifier.get()});
    server->route(http::Method::Get, QStringLiteral("/metrics"), http::Role::None, [this](const http::HttpRequest &) {
        http::HttpReply reply = http::HttpReply::text(metrics.render());
        reply.contentType = core::prometheus::contentType;
        return reply;
    });
    server->addHealthRoutes([this] {
        http::Readiness readiness;
        auto pinged = database->ping();
        readiness.databaseReachable = pinged.ok();
        if (!pinged.ok())
            readiness.detail = pinged.error().publicMessage;
        readiness.keyStoreDegraded = keyStore->degraded();
        return readiness;
    });
    http::registerSetupRoutes(*server, *setup);
    http::registerPaymentRoutes(*server, *tokens, *confirm);
    return {};
}

void AgentRuntime::Parts::openStream()
{
    // The live stream: WebSockets on this port, fed from the metrics above.
    stream::StreamHub::Options streamOptions;
    streamOptions.interval = std::chrono::milliseconds(config.stream.intervalMs);
    streamHub = std::make_unique<stream::StreamHub>(
        streamOptions,
        [this] {
            StreamMetrics m = stream::readStreamMetrics(metrics, breakers.get());
            if (const auto counts = countsCache->last()) {
                m.outboxPending = counts->outboxPending;
                m.outboxDead = counts->outboxDead;
            }
            return m;
        },
        [this] {
            return StreamSnapshot{{}, stream::streamBreakers(*breakers, clock.nowMs()), events.callbackMode()};
        },
        &metrics);
    // The mode other agents may have set before this one started; kept current by the
    // callback worker's reads and this agent's own changes (EventRelay).
    if (auto mode = callbackModes->mode(); mode.ok())
        events.noteCallbackMode(core::callbackModeName(mode.value().mode));
    server->webSocketRoute(
        QStringLiteral("/api/v1/stream"), http::Role::Viewer,
        [hub = streamHub.get()](std::unique_ptr<QWebSocket> socket) { hub->addClient(std::move(socket)); });
    streamHub->start();
    // The stream's outbox figures (docs/openapi.yaml: metrics messages carry outbox pending/dead): read
    // off the event loop about once a second, whatever the stream's own interval.
    countsTimer = std::make_unique<QTimer>();
    QObject::connect(countsTimer.get(), &QTimer::timeout, [this] { countsCache->refreshInBackground(); });
    countsTimer->start(kOutboxCountsRefreshMs);
    countsCache->refreshInBackground();
    events.attach(streamHub.get());
}

/// The operations API (breakers, modes, outbox, findings, compensations, patrol, close,
/// audit, callbacks, L1 records, locks) and QA's.
void AgentRuntime::Parts::registerOperationRoutes()
{
    const http::EventPublisher publish = events.sink();
    http::registerBreakerRoutes(*server, *breakers, clock, publish);
    http::registerCallbackRoutes(*server, *callbacks, clock, [this](const http::HttpRequest &request) {
        return refundCallbacks->interceptAlipay(request);
    });
    http::registerRefundRoutes(*server, *refundCallbacks, *refundStore);
    http::registerModeRoutes(*server, *callbackModes, *audit, clock, publish,
                             [this](core::CallbackMode mode) { callbacks->noteModeSet(mode); });
    http::registerOutboxRoutes(*server, *outboxStore, *audit, clock);
    http::registerFindingRoutes(*server, *findingReader);
    http::registerCompensationRoutes(*server, *compensations, *orders, clock, refunds.get());
    http::registerReconciliationRoutes(*server, *patrolRunner, *audit, clock);
    http::registerCloseRoutes(*server, *closer, *audit, clock);
    http::registerAuditRoutes(*server, *auditReader);
    // The rest of the operations API: callbacks, L1 records, locks.
    http::registerCallbackOpsRoutes(*server, *callbackHistory, *callbacks, *audit);
    http::registerIdempotencyRoutes(*server, *idempotency, *audit, clock, idempotency->inFlightTimeoutMs());
    const qint64 longestLockTtlMs = std::max<qint64>(confirmLockTtl().count(), callbackLockTtl().count());
    http::registerLockRoutes(*server, *keyStore, longestLockTtlMs, [this] { return callbacks->staleFenceRefused(); });
    if (config.qa.enabled)
        registerQa(publish);
}

core::Result<void> AgentRuntime::Parts::listen()
{
    const QHostAddress address(config.listen.host == u"localhost" ? QStringLiteral("127.0.0.1") : config.listen.host);
    if (address.isNull())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("listen: %1 is not an IP address").arg(config.listen.host));
    auto listening = server->listen(address, quint16(config.listen.port));
    if (!listening)
        return listening.error();
    port = listening.value();
    return {};
}

/// L1 records purged after 24 h; retention's batches.
void AgentRuntime::Parts::startHousekeeping()
{
    purgeTimer = std::make_unique<QTimer>();
    QObject::connect(purgeTimer.get(), &QTimer::timeout, [this] {
        QThreadPool::globalInstance()->start([store = idempotency.get(), now = clock.nowMs()] {
            auto purged = store->purgeOlderThan(now - kIdempotencyRetentionMs);
            if (purged && purged.value() > 0)
                qCInfo(lcApp) << "purged" << purged.value() << "idempotency records older than 24 h";
        });
    });
    purgeTimer->start(kIdempotencyPurgeIntervalMs);

    // Retention (docs/design.md, "Retention"): small batches on a pool thread, never on
    // the callback path; runs do not overlap.
    if (config.retention.intervalMs > 0) {
        retentionTimer = std::make_unique<QTimer>();
        QObject::connect(retentionTimer.get(), &QTimer::timeout, [this] {
            QThreadPool::globalInstance()->start([pruner = retention.get(), now = clock.nowMs()] {
                const core::RetentionPruner::Report report = pruner->runOnce(now);
                for (core::RetainedTable table : core::allRetainedTables) {
                    if (const qint64 n = report.deleted[std::size_t(table)]; n > 0)
                        qCInfo(lcApp).noquote()
                            << QStringLiteral("retention: %1 %2 rows deleted%3")
                                   .arg(n)
                                   .arg(core::retainedTableName(table),
                                        report.complete ? QString() : QStringLiteral(", more next run"));
                }
            });
        });
        retentionTimer->start(config.retention.intervalMs);
    }
}

} // namespace payonce::app
