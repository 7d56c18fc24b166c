#pragma once

// The agent's parts and the constants of their wiring, shared by agentruntime.cpp and the
// four wiring units (wirestorage, wirecallbacks, wireoperations, wirehttp).

#include "agentruntime.h"

#include "agentmetrics.h"
#include "configreload.h"
#include "eventrelay.h"
#include "operationalcountscache.h"
#include "outboxloops.h"
#include "simlauncher.h"

#include "callbacks/platformnotificationverifier.h"
#include "core/callback/callbackpipeline.h"
#include "core/callback/callbackworker.h"
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

// L1 records are kept 24 h (docs/openapi.yaml), swept every 10 minutes.
inline constexpr qint64 kIdempotencyRetentionMs = 24LL * 3600 * 1000;
inline constexpr int kIdempotencyPurgeIntervalMs = 10 * 60 * 1000;
// `accepted` callback rows (a crash after the log row, or accept-only mode ending) are
// finished by the worker every few seconds.
inline constexpr int kCallbackWorkerIntervalMs = 2000;
// An idle outbox dispatcher looks for due events this often: the delay between a payment's
// COMMIT and its order.paid delivery.
inline constexpr std::chrono::milliseconds kOutboxIdlePoll{500};
// Refunds the notification did not finish (an unknown outcome, a lost notification) are
// sent again or asked about once they are a minute old, looked at every 15 s.
inline constexpr qint64 kRefundFollowUpAfterMs = 60 * 1000;
inline constexpr int kRefundFollowUpIntervalMs = 15 * 1000;
// A webhook POST never takes longer than this (and stays inside the dispatcher's lease margin).
inline constexpr int kWebhookTimeoutMs = 5000;
/// How old the stream's outbox pending/dead figures may be.
inline constexpr int kOutboxCountsRefreshMs = 1000;
// One HTTP exchange of a QA scenario (a target's set-up or confirm, the simulator's control).
inline constexpr int kQaHttpTimeoutMs = 15000;

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
    QList<platform::ExtraPlatformKey> extraPlatformKeys;
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
    /// The confirm pipeline's lock ttl: its default, at least 4 Redis timeouts (as above).
    std::chrono::milliseconds confirmLockTtl() const;

    // The start, in five steps (AgentRuntime::start), one wiring unit each:
    // wirestorage.cpp: the database, the key store, the stores; the gateways.
    core::Result<void> openStorage();
    core::Result<void> openDatabase();
    core::Result<void> openKeyStore();
    void openStores();
    core::Result<void> openGateways();
    // wirecallbacks.cpp: the verifiers, the callback pipeline and its worker.
    core::Result<void> openCallbacks();
    core::Result<void> openVerifiers();
    core::CallbackPipelineOptions callbackOptions();
    core::Result<void> installTestPause(core::CallbackPipelineOptions &options) const;
    void startCallbackWorker();
    // wireoperations.cpp: the outbox, refunds and compensations, the patrol, order close, QA.
    core::Result<void> openOperations();
    void startOutbox();
    void openRefunds();
    void openPatrol();
    void openCloser();
    void registerQa(const http::EventPublisher &publish);
    // wirehttp.cpp: the confirm pipeline, the server and its routes, the stream, listening,
    // and the housekeeping timers.
    core::Result<void> startHttp();
    void openConfirm();
    core::Result<void> makeServer();
    void openStream();
    void registerOperationRoutes();
    core::Result<void> listen();
    void startHousekeeping();

    void stopBackgroundWork();
};

} // namespace payonce::app
