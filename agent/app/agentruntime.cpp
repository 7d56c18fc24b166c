#include "agentruntime.h"

#include "agentmetrics.h"
#include "configreload.h"
#include "eventrelay.h"
#include "operationalcountscache.h"
#include "outboxloops.h"
#include "simlauncher.h"

#include "callbacks/platformnotificationverifier.h"
#include "core/callback/callbackpipeline.h"
#include "core/callback/scenarioswitches.h"
#include "core/confirm/confirmpipeline.h"
#include "core/confirm/tokenissuer.h"
#include "core/gateways/breakerregistry.h"
#include "core/gateways/resilientgateway.h"
#include "core/metrics/metricsregistry.h"
#include "core/orders/setupservice.h"
#include "core/outbox/outboxhandler.h"
#include "core/ports/clock.h"
#include "core/ports/distributedlock.h"
#include "core/ports/keystore.h"
#include "core/qa/scenariorunner.h"
#include "core/retention/retentionpruner.h"
#include "core/settlement/compensationservice.h"
#include "core/settlement/ordercloser.h"
#include "core/settlement/patrol.h"
#include "core/settlement/patrolrunner.h"
#include "core/settlement/refundservice.h"
#include "gateway/gatewayfactory.h"
#include "http/auditroutes.h"
#include "http/breakerroutes.h"
#include "http/callbackopsroutes.h"
#include "http/callbackroutes.h"
#include "http/closeroutes.h"
#include "http/compensationroutes.h"
#include "http/errormapping.h"
#include "http/findingroutes.h"
#include "http/httpserver.h"
#include "http/idempotencyroutes.h"
#include "http/lockroutes.h"
#include "http/moderoutes.h"
#include "http/outboxroutes.h"
#include "http/paymentroutes.h"
#include "http/qaroutes.h"
#include "http/reconciliationroutes.h"
#include "http/refundroutes.h"
#include "http/setuproutes.h"
#include "logging/categories.h"
#include "qa/httpscenariodriver.h"
#include "redis/keystorefactory.h"
#include "sql/database.h"
#include "sql/migrationrunner.h"
#include "sql/sqlauditreader.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlbreakermodestore.h"
#include "sql/sqlcallbackhistory.h"
#include "sql/sqlcallbackstore.h"
#include "sql/sqlcompensationstore.h"
#include "sql/sqlfenceepochsource.h"
#include "sql/sqlfindingreader.h"
#include "sql/sqlidempotencystore.h"
#include "sql/sqloperationalcounts.h"
#include "sql/sqlorderclosestore.h"
#include "sql/sqlorderrepository.h"
#include "sql/sqloutboxstore.h"
#include "sql/sqlpatrolstore.h"
#include "sql/sqlpaymentstore.h"
#include "sql/sqlqarunstore.h"
#include "sql/sqlrefundstore.h"
#include "sql/sqlretentionstore.h"
#include "stream/streamhub.h"
#include "stream/streamsources.h"
#include "webhook/webhookhandler.h"

#include <QHostAddress>
#include <QThread>
#include <QThreadPool>
#include <QTimer>
#include <QWebSocket>

#include <atomic>
#include <map>

namespace payonce::app {

using core::Error;
using core::ErrorCode;

namespace {
// L1 records are kept 24 h (docs/openapi.yaml), swept every 10 minutes.
constexpr qint64 kIdempotencyRetentionMs = 24LL * 3600 * 1000;
constexpr int kIdempotencyPurgeIntervalMs = 10 * 60 * 1000;
// `accepted` callback rows (a crash after the log row, or accept-only mode ending) are
// finished by the worker every few seconds.
constexpr int kCallbackWorkerIntervalMs = 2000;
// An idle outbox dispatcher looks for due events this often: the delay between a payment's
// COMMIT and its order.paid delivery.
constexpr std::chrono::milliseconds kOutboxIdlePoll{500};
// Refunds the notification did not finish (an unknown outcome, a lost notification) are
// sent again or asked about once they are a minute old, looked at every 15 s.
constexpr qint64 kRefundFollowUpAfterMs = 60 * 1000;
constexpr int kRefundFollowUpIntervalMs = 15 * 1000;
// A webhook POST never takes longer than this (and stays inside the dispatcher's lease margin).
constexpr int kWebhookTimeoutMs = 5000;
/// How old the stream's outbox pending/dead figures may be.
constexpr int kOutboxCountsRefreshMs = 1000;
// One HTTP exchange of a QA scenario (a target's set-up or confirm, the simulator's control).
constexpr int kQaHttpTimeoutMs = 15000;
} // namespace

/// Declared in the order they must be built; destroyed in reverse, so nothing outlives
/// what it points to.
struct AgentRuntime::Parts {
    config::Config config;
    core::SystemClock clock;
    core::MetricsRegistry metrics; // before everything that counts into it
    EventRelay events;             // before everything that publishes into it
    std::unique_ptr<sql::Database> database;
    std::unique_ptr<sql::SqlFenceEpochSource> fenceEpochs;
    std::unique_ptr<core::KeyStore> keyStore;
    std::unique_ptr<sql::SqlAuditWriter> audit;
    std::unique_ptr<sql::SqlIdempotencyStore> idempotency;
    std::unique_ptr<sql::SqlRetentionStore> retentionStore;
    std::unique_ptr<core::RetentionPruner> retention;
    std::unique_ptr<sql::SqlPaymentStore> payments;
    std::unique_ptr<sql::SqlOrderRepository> orders;
    std::unique_ptr<sql::SqlBreakerModeStore> breakerModes;
    std::unique_ptr<sql::SqlCallbackStore> callbackStore;
    std::unique_ptr<sql::SqlCallbackModeStore> callbackModes;
    std::unique_ptr<sql::SqlCallbackHistory> callbackHistory; // replay's reads, the callback inspector
    std::unique_ptr<core::BreakerRegistry> breakers;
    std::unique_ptr<SimLauncher> sim;
    std::map<core::Channel, std::unique_ptr<core::PaymentGateway>> platformGateways;
    std::map<core::Channel, std::unique_ptr<core::ResilientGateway>> gateways;
    std::unique_ptr<core::SetupService> setup;
    std::unique_ptr<core::TokenIssuer> tokens;
    std::unique_ptr<core::ConfirmPipeline> confirm;
    QList<gateway::ExtraPlatformKey> extraPlatformKeys;
    std::unique_ptr<core::NotificationVerifier> verifier;
    std::unique_ptr<core::RefundNotificationVerifier> refundVerifier;
    // qa.enabled only: qa_runs, and the running scenarios' disable_layers the pipeline asks.
    std::unique_ptr<sql::SqlQaRunStore> qaRuns;
    std::unique_ptr<core::ScenarioSwitches> scenarioSwitches;
    std::unique_ptr<core::CallbackPipeline> callbacks;
    std::unique_ptr<core::CallbackWorker> callbackWorker;
    std::unique_ptr<QTimer> callbackWorkerTimer;
    std::atomic<bool> callbackWorkerRunning{false};
    std::unique_ptr<sql::SqlOutboxStore> outboxStore;
    core::OutboxHandlerRegistry outboxHandlers;
    std::unique_ptr<OutboxLoops> outboxLoops;
    std::unique_ptr<sql::SqlCompensationStore> compensationStore;
    std::unique_ptr<core::CompensationService> compensations;
    std::unique_ptr<sql::SqlRefundStore> refundStore;
    std::unique_ptr<core::RefundService> refunds;
    std::unique_ptr<http::RefundCallbacks> refundCallbacks;
    std::unique_ptr<QTimer> refundFollowUpTimer;
    std::atomic<bool> refundFollowUpRunning{false};
    std::unique_ptr<sql::SqlPatrolStore> patrolStore;
    std::unique_ptr<core::Patrol> patrol;
    std::unique_ptr<core::PatrolRunner> patrolRunner;
    std::unique_ptr<QTimer> patrolTimer;
    std::unique_ptr<sql::SqlOrderCloseStore> closeStore;
    std::unique_ptr<core::OrderCloser> closer;
    std::unique_ptr<QTimer> closerTimer;
    std::unique_ptr<sql::SqlFindingReader> findingReader;
    std::unique_ptr<sql::SqlAuditReader> auditReader;
    std::unique_ptr<sql::SqlOperationalCounts> operationalCounts;
    std::unique_ptr<OperationalCountsCache> countsCache; // after its reader: goes first
    std::unique_ptr<QTimer> countsTimer;
    std::unique_ptr<http::HttpServer> server;
    std::unique_ptr<stream::StreamHub> streamHub; // after the server: its clients go first
    // QA scenarios (qa.enabled only): the runner goes before the hub it publishes to.
    std::unique_ptr<qa::HttpScenarioDriver> qaDriver;
    std::unique_ptr<core::ScenarioRunner> qaRunner;
    std::unique_ptr<QTimer> purgeTimer;
    std::unique_ptr<QTimer> retentionTimer;
    quint16 port = 0;

    QString callbackBaseUrl() const;
    /// The callback pipeline's lock ttl: its default, at least 4 Redis timeouts (the key
    /// store refuses one below 3: a hung renewal must not cost the lease).
    std::chrono::milliseconds callbackLockTtl() const;
    /// The offered channels' gateways, behind their breakers; null for a channel not offered.
    std::function<core::PaymentGateway *(core::Channel)> gatewayLookup();
    core::Result<void> openStorage();
    core::Result<void> openGateways();
    core::Result<void> openCallbacks();
    core::Result<void> openOperations();
    core::Result<void> startHttp();
    void registerQa(const http::EventPublisher &publish);
    void stopBackgroundWork();
};

/// Where the platforms send notifications: public_base_url, or the listen address.
std::chrono::milliseconds AgentRuntime::Parts::callbackLockTtl() const
{
    return std::max(core::CallbackPipelineOptions{}.lockTtl, std::chrono::milliseconds(4LL * config.redisTimeoutMs));
}

QString AgentRuntime::Parts::callbackBaseUrl() const
{
    return config.publicBaseUrl.isEmpty() ? QStringLiteral("http://") + config.listen.toString() : config.publicBaseUrl;
}

std::function<core::PaymentGateway *(core::Channel)> AgentRuntime::Parts::gatewayLookup()
{
    return [this](core::Channel channel) -> core::PaymentGateway * {
        const auto found = gateways.find(channel);
        return found == gateways.end() ? nullptr : found->second.get();
    };
}

core::Result<void> AgentRuntime::Parts::openStorage()
{
    database = std::make_unique<sql::Database>(sql::DatabaseOptions{config.db, config.dbConnectTimeoutMs, 8});
    if (auto connected = database->connect(); !connected) {
        Error error = connected.error();
        error.internalMessage = QStringLiteral("database %1: %2").arg(config.db.redacted(), error.internalMessage);
        return error;
    }
    sql::MigrationRunner migrations(*database);
    auto migrated = migrations.migrate();
    if (!migrated) {
        Error error = migrated.error();
        error.internalMessage = QStringLiteral("migrating %1: %2").arg(config.db.redacted(), error.internalMessage);
        return error;
    }
    qCInfo(lcApp).noquote()
        << QStringLiteral("database %1 up, %2 migration(s) applied").arg(config.db.redacted()).arg(migrated.value());

    // Fencing epochs come from the database, so tokens keep growing across Redis restarts.
    fenceEpochs = std::make_unique<sql::SqlFenceEpochSource>(*database);
    redis::KeyStoreSettings keyStoreSettings;
    keyStoreSettings.redis = config.redis;
    keyStoreSettings.sentinels = config.redisSentinel.sentinels;
    keyStoreSettings.masterName = config.redisSentinel.masterName;
    keyStoreSettings.sentinelPassword = config.redisSentinel.password.reveal();
    keyStoreSettings.clusterSeeds = config.redisCluster;
    keyStoreSettings.severalInstances = config.instances > 1;
    keyStoreSettings.connectTimeout = std::chrono::milliseconds(config.redisTimeoutMs);
    keyStoreSettings.commandTimeout = std::chrono::milliseconds(config.redisTimeoutMs);
    auto opened = redis::openKeyStore(keyStoreSettings, *fenceEpochs);
    if (!opened) {
        Error error = opened.error();
        error.internalMessage = QStringLiteral("key store %1: %2").arg(config.redis.redacted(), error.internalMessage);
        return error;
    }
    keyStore = std::move(opened).value();
    keyStore->setLockLostSink(events.sink());
    // Redis is an accelerator (docs/design.md rule 5): down at start means degraded, not dead.
    if (auto pinged = keyStore->ping(); !pinged) {
        qCWarning(lcApp).noquote() << QStringLiteral("key store %1 unreachable, running degraded: %2")
                                          .arg(config.redis.redacted(), pinged.error().internalMessage);
    }
    qCInfo(lcApp).noquote() << QStringLiteral("key store %1 (%2)%3")
                                   .arg(keyStore->backendName(), config.redis.redacted(),
                                        keyStore->degraded() ? QStringLiteral(", degraded") : QString());

    audit = std::make_unique<sql::SqlAuditWriter>(*database);
    idempotency = std::make_unique<sql::SqlIdempotencyStore>(*database);
    retentionStore = std::make_unique<sql::SqlRetentionStore>(*database);
    core::RetentionOptions kept;
    kept.days[std::size_t(core::RetainedTable::Deliveries)] = config.retention.deliveriesDays;
    kept.days[std::size_t(core::RetainedTable::CallbackLog)] = config.retention.callbackLogDays;
    kept.days[std::size_t(core::RetainedTable::OutboxDelivered)] = config.retention.outboxDeliveredDays;
    kept.days[std::size_t(core::RetainedTable::QaRuns)] = config.retention.qaRunsDays;
    kept.batchSize = config.retention.batchSize;
    retention = std::make_unique<core::RetentionPruner>(*retentionStore, kept);
    payments = std::make_unique<sql::SqlPaymentStore>(*database);
    orders = std::make_unique<sql::SqlOrderRepository>(*database);
    breakerModes = std::make_unique<sql::SqlBreakerModeStore>(*database);
    callbackStore = std::make_unique<sql::SqlCallbackStore>(*database);
    callbackModes = std::make_unique<sql::SqlCallbackModeStore>(*database);
    callbackHistory = std::make_unique<sql::SqlCallbackHistory>(*database);
    breakers = std::make_unique<core::BreakerRegistry>(clock, *breakerModes, audit.get());
    return {};
}

core::Result<void> AgentRuntime::Parts::openGateways()
{
    gateway::GatewayFactoryOptions options;
    if (config.sim.enabled) {
        auto started = SimLauncher::start(config);
        if (!started)
            return started.error();
        sim = std::move(started).value();
        options.baseUrlOverride = sim->platform().baseUrl;
        options.extraPlatformKeys.append({sim->platform().serial, sim->platform().publicKeyPem});
        extraPlatformKeys = options.extraPlatformKeys;
    }
    // A channel without configuration is simply not offered: its confirms answer 503
    // gateway_unavailable (the pipeline finds no gateway), and the log says why at start.
    if (config.wechat.isConfigured()) {
        auto made = gateway::makeWeChatPayGateway(config.wechat, options);
        if (!made)
            return made.error();
        platformGateways[core::Channel::WeChat] = std::move(made).value();
    }
    if (config.alipay.isConfigured()) {
        auto made = gateway::makeAlipayGateway(config.alipay, options);
        if (!made)
            return made.error();
        platformGateways[core::Channel::Alipay] = std::move(made).value();
    }
    for (core::Channel channel : core::allChannels) {
        const auto found = platformGateways.find(channel);
        const QString name = core::BreakerRegistry::gatewayBreakerName(core::channelName(channel));
        core::CircuitBreaker &breaker = breakers->breaker(name); // listed even when unconfigured
        if (found == platformGateways.end()) {
            qCWarning(lcApp).noquote() << QStringLiteral("channel %1 is not configured: its confirms answer 503")
                                              .arg(core::channelName(channel));
            continue;
        }
        gateways[channel] = std::make_unique<core::ResilientGateway>(*found->second, breaker, core::RetryPolicy());
    }
    return {};
}

core::Result<void> AgentRuntime::Parts::openCallbacks()
{
    if (config.wechat.isConfigured() || config.alipay.isConfigured()) {
        auto made = callbacks::makeNotificationVerifier(config.wechat, config.alipay, extraPlatformKeys);
        if (!made)
            return made.error();
        verifier = std::move(made).value();
        auto refundMade = callbacks::makeRefundNotificationVerifier(config.wechat, config.alipay, extraPlatformKeys);
        if (!refundMade)
            return refundMade.error();
        refundVerifier = std::move(refundMade).value();
    } else {
        // No platform configured: every delivery is refused as unverifiable (401), and
        // still recorded in callback_deliveries.
        verifier = std::make_unique<callbacks::PlatformNotificationVerifier>(callbacks::NotificationVerifierOptions{});
        refundVerifier = std::make_unique<callbacks::PlatformNotificationVerifier>(
            callbacks::NotificationVerifierOptions{});
    }
    core::CallbackPipelineOptions options;
    options.lockTtl = callbackLockTtl();
    options.weChatMchId = config.wechat.mchid;
    options.weChatAppId = config.wechat.appid;
    options.alipaySellerId = config.alipay.sellerId;
    options.alipayAppId = config.alipay.appId;
    options.qaEnabled = config.qa.enabled;
    if (config.qa.enabled) {
        qaRuns = std::make_unique<sql::SqlQaRunStore>(*database);
        scenarioSwitches = std::make_unique<core::ScenarioSwitches>(*qaRuns, clock);
        options.scenarioSwitches = [this](const QString &orderNo) { return scenarioSwitches->forOrder(orderNo); };
    }
    options.oneCommit = config.callbacks.commit == config::CallbackCommit::One;
    options.agentId = config.instanceId;
    options.httpStatusOf = [](core::CallbackOutcomeCode code) { return http::httpStatus(code); };
    options.history = callbackHistory.get();
    options.events = events.sink();
    // Crash tests: PAYONCE_TEST_PAUSE_AT=after_log_row_durable parks every delivery at that
    // point (forever), so a test can kill -9 the agent exactly there; after_lock_before_begin
    // parks it holding its pay lock (GET /api/v1/locks shows it); after_lock_until_lost
    // holds the lock until the lease is lost and then goes on to write with its fencing
    // token — the late writer of a holder paused past its lease (SIGSTOP), whose writes
    // the database must refuse. Only with qa.enabled.
    const QString pauseAt = qEnvironmentVariable("PAYONCE_TEST_PAUSE_AT");
    if (!pauseAt.isEmpty() && config.qa.enabled) {
        const bool untilLost = pauseAt == u"after_lock_until_lost";
        const auto pausePoint = pauseAt == u"after_log_row_durable" ? core::CallbackHookPoint::AfterLogRowDurable
                                : pauseAt == u"after_lock_before_begin" || untilLost
                                    ? core::CallbackHookPoint::AfterLockBeforeBegin
                                    : std::optional<core::CallbackHookPoint>();
        if (!pausePoint)
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("PAYONCE_TEST_PAUSE_AT=%1: only after_log_row_durable, "
                                              "after_lock_before_begin and after_lock_until_lost exist")
                                   .arg(pauseAt));
        // A delivery settled in one commit has no point between its log row and its paid
        // transaction: only the accepted-first path stops there.
        if (*pausePoint == core::CallbackHookPoint::AfterLogRowDurable && options.oneCommit)
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("PAYONCE_TEST_PAUSE_AT=after_log_row_durable needs callbacks.commit "
                                              "accepted_first"));
        qCWarning(lcApp).noquote() << "test hook: callbacks pause at" << pauseAt;
        // after_lock_until_lost is one pause: once a held lock has been lost (the agent was
        // frozen past its lease and thawed), the holders still waiting and every later
        // delivery go on at once. Holding on, a live watchdog would renew those locks for
        // ever and no agent could pay their orders.
        auto pauseOver = std::make_shared<std::atomic<bool>>(false);
        options.testHook = [point = *pausePoint, untilLost, pauseOver](core::CallbackHookPoint at,
                                                                       const core::CallbackHookContext &context) {
            if (at == point && untilLost) {
                if (!context.lock)
                    return core::CallbackHookAction::Continue; // no lock: the key store is down
                if (pauseOver->load()) {
                    // A lock taken before the freeze by a thread that reached this point only
                    // after the thaw is a late writer too: every writer after the pause is
                    // logged with its token, so each refusal can be matched to one.
                    qCWarning(lcApp).noquote()
                        << QStringLiteral(
                               "test hook: lock of %1 passing after the pause, writing with fencing token %2")
                               .arg(context.payNo)
                               .arg(context.lock->fencingToken());
                    return core::CallbackHookAction::Continue;
                }
                qCWarning(lcApp).noquote()
                    << QStringLiteral("test hook: holding the lock of %1 until it is lost").arg(context.payNo);
                while (!context.lock->lost() && !pauseOver->load())
                    QThread::msleep(10);
                // Released by another holder's loss: this one held through the pause too, and its
                // own watchdog may not have noticed yet. Either way a late writer, logged as one.
                const bool lost = context.lock->lost();
                pauseOver->store(true);
                qCWarning(lcApp).noquote()
                    << QStringLiteral("test hook: lock of %1 %2, writing with fencing token %3")
                           .arg(context.payNo, lost ? QStringLiteral("lost") : QStringLiteral("held past the pause"))
                           .arg(context.lock->fencingToken());
                return core::CallbackHookAction::Continue;
            }
            if (at == point) {
                qCWarning(lcApp).noquote()
                    << QStringLiteral("test hook: paused %1 of %2")
                           .arg(at == core::CallbackHookPoint::AfterLogRowDurable ? QStringLiteral("after the log row")
                                                                                  : QStringLiteral("holding the lock"),
                                context.payNo);
                for (;;)
                    QThread::sleep(1);
            }
            return core::CallbackHookAction::Continue;
        };
    }
    callbacks = std::make_unique<core::CallbackPipeline>(*verifier, *callbackStore, *callbackModes, keyStore->locks(),
                                                         &keyStore->seenProcessed(), clock, options);
    callbackWorker = std::make_unique<core::CallbackWorker>(*callbacks, *callbackStore, *callbackModes, clock);
    // Rows written from the platform's query (no delivery) are settled by querying again.
    callbackWorker->setGateways(gatewayLookup());
    callbackWorkerTimer = std::make_unique<QTimer>();
    QObject::connect(callbackWorkerTimer.get(), &QTimer::timeout, [this] {
        if (callbackWorkerRunning.exchange(true))
            return; // the previous run is still going
        QThreadPool::globalInstance()->start([this] {
            const core::CallbackWorker::Report report = callbackWorker->runOnce();
            if (report.modeRead)
                events.noteCallbackMode(report.acceptOnly ? QStringLiteral("accept_only") : QStringLiteral("normal"));
            if (report.finished > 0 || report.failed > 0)
                qCInfo(lcApp) << "callback worker: finished" << report.finished << "accepted row(s)," << report.failed
                              << "failed";
            callbackWorkerRunning = false;
        });
    });
    callbackWorkerTimer->start(kCallbackWorkerIntervalMs);
    return {};
}

core::Result<void> AgentRuntime::Parts::openOperations()
{
    // The outbox: every event is logged; order.paid also goes to the configured webhooks,
    // behind the breaker "webhook.order.paid".
    outboxStore = std::make_unique<sql::SqlOutboxStore>(*database);
    outboxHandlers.setFallback(std::make_shared<core::LogHandler>());
    core::OutboxDispatcherOptions outboxOptions;
    outboxOptions.dispatcherId = config.instanceId;
    outboxOptions.batchSize = config.outbox.batchSize;
    outboxOptions.maxAttempts = config.outbox.maxAttempts;
    outboxOptions.claimLease = std::chrono::milliseconds(config.outbox.claimLeaseMs);
    outboxOptions.leaseMargin = outboxOptions.claimLease / 2;
    outboxOptions.events = events.sink();
    if (!config.outbox.webhookUrls.isEmpty()) {
        webhook::WebhookOptions webhookOptions;
        for (const QString &url : std::as_const(config.outbox.webhookUrls))
            webhookOptions.urls.append(QUrl(url));
        webhookOptions.timeoutMs = int(std::min<qint64>(kWebhookTimeoutMs, outboxOptions.leaseMargin.count() / 2));
        // Its own breaker: receivers that are down fail fast instead of holding every
        // dispatcher for a timeout per event; operators see and force it like the gateways'.
        core::CircuitBreaker &breaker = breakers->breaker(
            core::BreakerRegistry::webhookBreakerName(QStringLiteral("order.paid")));
        outboxHandlers.add(QStringLiteral("order.paid"),
                           std::make_shared<webhook::WebhookHandler>(webhookOptions, &breaker));
    }
    outboxLoops = std::make_unique<OutboxLoops>(*outboxStore, outboxHandlers, clock, outboxOptions,
                                                config.outbox.dispatchers, kOutboxIdlePoll);
    outboxLoops->start();
    qCInfo(lcApp).noquote() << QStringLiteral("outbox: %1 dispatcher(s), order.paid to %2 webhook(s)")
                                   .arg(config.outbox.dispatchers)
                                   .arg(config.outbox.webhookUrls.size());

    // The patrol and the compensations it proposes; the runner lets one run go at a time.
    compensationStore = std::make_unique<sql::SqlCompensationStore>(*database);
    compensations = std::make_unique<core::CompensationService>(*compensationStore, *audit, events.sink());
    // Refunds: recorded by an approved refund compensation, sent to the platform by the
    // service, settled by the platform's notification or the follow-up's query.
    refundStore = std::make_unique<sql::SqlRefundStore>(*database);
    core::RefundServiceOptions refundOptions;
    refundOptions.notifyUrlWeChat = callbackBaseUrl() + QStringLiteral("/api/v1/callbacks/wechat/refund");
    refundOptions.notifyUrlAlipay = callbackBaseUrl() + QStringLiteral("/api/v1/callbacks/alipay/refund");
    refunds = std::make_unique<core::RefundService>(*refundStore, gatewayLookup(), clock, refundOptions);
    refundCallbacks = std::make_unique<http::RefundCallbacks>(*refundVerifier, *refunds, clock);
    refundFollowUpTimer = std::make_unique<QTimer>();
    QObject::connect(refundFollowUpTimer.get(), &QTimer::timeout, [this] {
        if (refundFollowUpRunning.exchange(true))
            return;
        QThreadPool::globalInstance()->start([this] {
            auto report = refunds->followUp(clock.nowMs() - kRefundFollowUpAfterMs);
            if (!report)
                qCWarning(lcApp).noquote() << "refund follow-up failed:" << report.error().internalMessage;
            else if (report.value().submitted + report.value().settled + report.value().failed > 0)
                qCInfo(lcApp) << "refund follow-up: submitted" << report.value().submitted << "settled"
                              << report.value().settled << "failed" << report.value().failed;
            refundFollowUpRunning = false;
        });
    });
    refundFollowUpTimer->start(kRefundFollowUpIntervalMs);
    patrolStore = std::make_unique<sql::SqlPatrolStore>(*database);
    // Orders stuck in PAYING are asked at their platform (behind the breakers) and settled
    // through the callback path's own transaction.
    core::PatrolSettlement settlement;
    settlement.gateways = gatewayLookup();
    settlement.callbacks = callbacks.get();
    settlement.modes = callbackModes.get();
    settlement.audit = audit.get();
    patrol = std::make_unique<core::Patrol>(
        *patrolStore, *compensations,
        core::PatrolOptions{config.patrol.stuckPayingAfterMs, config.patrol.stuckAcceptedAfterMs}, settlement,
        events.sink());
    patrolRunner = std::make_unique<core::PatrolRunner>(*patrol);
    findingReader = std::make_unique<sql::SqlFindingReader>(*database);
    auditReader = std::make_unique<sql::SqlAuditReader>(*database);
    if (config.patrol.intervalMs > 0) {
        patrolTimer = std::make_unique<QTimer>();
        QObject::connect(patrolTimer.get(), &QTimer::timeout, [this] {
            QThreadPool::globalInstance()->start([this] {
                auto run = patrolRunner->tryRun(clock.nowMs());
                if (!run)
                    qCWarning(lcApp).noquote() << "patrol run failed:" << run.error().internalMessage;
                else if (run.value() && !run.value()->isEmpty())
                    qCInfo(lcApp) << "patrol: " << run.value()->size() << "finding(s)";
            });
        });
        patrolTimer->start(config.patrol.intervalMs);
    }

    // Order close: PENDING orders past close.pending_timeout_ms are closed at their
    // platform (behind the breakers), then CLOSED; a trade found paid is settled through
    // the callback path instead. tryRunOnce keeps runs from overlapping.
    closeStore = std::make_unique<sql::SqlOrderCloseStore>(*database);
    core::OrderCloserPorts closerPorts;
    closerPorts.gateways = settlement.gateways;
    closerPorts.callbacks = callbacks.get();
    closerPorts.modes = callbackModes.get();
    closerPorts.audit = audit.get();
    core::OrderCloserOptions closerOptions;
    closerOptions.pendingTimeoutMs = config.close.pendingTimeoutMs;
    closer = std::make_unique<core::OrderCloser>(*closeStore, closerOptions, closerPorts);
    if (config.close.pendingTimeoutMs > 0) {
        closerTimer = std::make_unique<QTimer>();
        QObject::connect(closerTimer.get(), &QTimer::timeout, [this] {
            QThreadPool::globalInstance()->start([this] {
                auto run = closer->tryRunOnce(clock.nowMs());
                if (!run)
                    qCWarning(lcApp).noquote() << "order close run failed:" << run.error().internalMessage;
                else if (run.value() && (run.value()->closed + run.value()->settled + run.value()->left) > 0)
                    qCInfo(lcApp) << "order close:" << run.value()->closed << "closed," << run.value()->settled
                                  << "found paid and settled," << run.value()->left << "left PENDING";
            });
        });
        closerTimer->start(config.close.intervalMs);
    }
    return {};
}

core::Result<void> AgentRuntime::Parts::startHttp()
{
    core::ConfirmPipelineOptions confirmOptions;
    // The key store refuses a lock TTL below 3 command timeouts (one hung renewal must not
    // cost the lease); keep the confirm lock above that whatever redis_timeout_ms says.
    confirmOptions.lockTtl = std::max(confirmOptions.lockTtl, std::chrono::milliseconds(4LL * config.redisTimeoutMs));
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
    const qint64 longestLockTtlMs = std::max<qint64>(confirmOptions.lockTtl.count(), callbackLockTtl().count());
    http::registerLockRoutes(*server, *keyStore, longestLockTtlMs, [this] { return callbacks->staleFenceRefused(); });
    if (config.qa.enabled)
        registerQa(publish);

    const QHostAddress address(config.listen.host == u"localhost" ? QStringLiteral("127.0.0.1") : config.listen.host);
    if (address.isNull())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("listen: %1 is not an IP address").arg(config.listen.host));
    auto listening = server->listen(address, quint16(config.listen.port));
    if (!listening)
        return listening.error();
    port = listening.value();

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
    return {};
}

/// QA scenarios: the runner drives the targets' HTTP API and the simulator
/// (this agent's child with sim.enabled, else the payonce-sim at wechat.base_url).
void AgentRuntime::Parts::registerQa(const http::EventPublisher &publish)
{
    const QString simBaseUrl = sim ? sim->platform().baseUrl : config.wechat.baseUrl;
    QString selfHost = config.listen.host;
    if (selfHost == u"0.0.0.0" || selfHost == u"localhost")
        selfHost = QStringLiteral("127.0.0.1");
    const QString selfBaseUrl = QStringLiteral("http://%1:%2").arg(selfHost).arg(config.listen.port);
    qaDriver = std::make_unique<qa::HttpScenarioDriver>(simBaseUrl, kQaHttpTimeoutMs);
    core::ScenarioRunnerOptions options;
    options.publish = publish;
    options.agentId = config.instanceId;
    options.leaseMs = config.qa.leaseMs;
    options.authorization = "Bearer " + config.qa.token.reveal().toUtf8();
    qaRunner = std::make_unique<core::ScenarioRunner>(*qaRuns, *qaDriver, *audit, clock, options);
    http::registerQaRoutes(*server, *qaRunner, *qaRuns, selfBaseUrl, config.qa.peers);
    qCWarning(lcApp).noquote() << QStringLiteral("qa.enabled: POST /api/v1/qa/scenarios is open to operators, "
                                                 "scenarios drive the simulator at %1")
                                      .arg(simBaseUrl);
}

AgentRuntime::AgentRuntime() : d(std::make_unique<Parts>())
{
}

/// Timers stop first (no new background work), then the outbox loops finish their round
/// and join; work already on the global pool is waited for by the destructor.
void AgentRuntime::Parts::stopBackgroundWork()
{
    for (QTimer *timer : {purgeTimer.get(), retentionTimer.get(), callbackWorkerTimer.get(), patrolTimer.get(),
                          refundFollowUpTimer.get(), closerTimer.get(), countsTimer.get()}) {
        if (timer)
            timer->stop();
    }
    if (outboxLoops)
        outboxLoops->stop();
    events.detach();
    if (streamHub)
        streamHub->stop();
    if (qaRunner)
        qaRunner->requestStop();
    if (countsCache)
        countsCache->stop();
}

AgentRuntime::~AgentRuntime()
{
    d->stopBackgroundWork();
    QThreadPool::globalInstance()->waitForDone();
}

core::Result<std::unique_ptr<AgentRuntime>> AgentRuntime::start(config::Config config)
{
    std::unique_ptr<AgentRuntime> runtime(new AgentRuntime);
    runtime->d->config = std::move(config);
    for (auto step : {&Parts::openStorage, &Parts::openGateways, &Parts::openCallbacks, &Parts::openOperations,
                      &Parts::startHttp}) {
        if (auto done = (runtime->d.get()->*step)(); !done)
            return done.error();
    }
    return runtime;
}

bool AgentRuntime::drain(std::chrono::milliseconds timeout)
{
    d->stopBackgroundWork();
    return d->server ? d->server->drain(timeout) : true;
}

void AgentRuntime::reload(const config::Config &next)
{
    Parts &p = *d;
    const ReloadPlan plan = planReload(p.config, next);
    const int closed = p.server->setTokens(http::Authenticator(next.authTokens));
    p.server->setMaxStreamsPerToken(next.stream.maxPerToken);
    p.config.authTokens = next.authTokens;
    p.config.stream.maxPerToken = next.stream.maxPerToken;
    // What an operator may have set by hand in the database, or another agent just now.
    p.breakers->refreshModes();
    if (auto mode = p.callbackModes->mode(); mode.ok()) {
        p.callbacks->noteModeSet(mode.value().mode);
        p.events.noteCallbackMode(core::callbackModeName(mode.value().mode));
    } else {
        qCWarning(lcApp).noquote() << "reload: the callback mode could not be read, the last one read stays:"
                                   << mode.error().internalMessage;
    }
    auto listed = [](const QStringList &names) {
        return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
    };
    qCInfo(lcApp).noquote() << QStringLiteral("configuration reloaded: %1 token(s); added %2; removed %3; %4 stream(s) "
                                              "of removed tokens closed; stream.max_per_token %5")
                                   .arg(next.authTokens.size())
                                   .arg(listed(plan.tokensAdded), listed(plan.tokensRemoved))
                                   .arg(closed)
                                   .arg(next.stream.maxPerToken);
    if (!plan.restartNeeded.isEmpty())
        qCWarning(lcApp).noquote() << QStringLiteral("changed in the file, applied only at the next start: %1")
                                          .arg(plan.restartNeeded.join(QStringLiteral(", ")));
}

quint16 AgentRuntime::port() const
{
    return d->port;
}

QList<http::RouteInfo> AgentRuntime::routes() const
{
    return d->server ? d->server->routes() : QList<http::RouteInfo>();
}

} // namespace payonce::app
