#include "simworld.h"

#include "sql/migrationrunner.h"

namespace payonce::simulation {

using namespace std::chrono_literals;

namespace {
// The simulation's own times, short enough that a run of minutes of simulated time
// reaches every timeout: accepted rows older than 5 s are the worker's, PAYING past 30 s
// and accepted past 60 s are the patrol's, PENDING past 90 s is closed.
constexpr qint64 kWorkerMinAgeMs = 5000;
constexpr qint64 kStuckPayingMs = 30000;
constexpr qint64 kStuckAcceptedMs = 60000;
constexpr qint64 kPendingTimeoutMs = 90000;
} // namespace

core::PaymentGateway *SimWorld::gateway(core::Channel channel)
{
    return channel == core::Channel::WeChat ? static_cast<core::PaymentGateway *>(weChat.get()) : alipay.get();
}

SimWorld::~SimWorld()
{
    // Services before the stores they use, stores before the database.
    dispatcher.reset();
    closer.reset();
    patrol.reset();
    refunds.reset();
    compensations.reset();
    worker.reset();
    callbacks.reset();
    confirm.reset();
    tokens.reset();
    setup.reset();
    keys.reset();
}

core::Result<std::unique_ptr<SimWorld>> SimWorld::build(const Options &options, SimClock &clock, SimPlatform &platform,
                                                        WorldProbe &probe, const core::OutboxHandlerRegistry &handlers)
{
    auto w = std::make_unique<SimWorld>();
    sql::DatabaseOptions dbOptions{options.url, 5000, 8};
    dbOptions.clock = &clock;
    w->database = std::make_unique<sql::Database>(dbOptions);
    if (auto connected = w->database->connect(); !connected)
        return connected.error();
    sql::MigrationRunner migrations(*w->database);
    if (auto migrated = migrations.migrate(); !migrated)
        return migrated.error();

    w->epochs = std::make_unique<sql::SqlFenceEpochSource>(*w->database);
    auto keys = redis::EmbeddedKeyStore::create(*w->epochs);
    if (!keys)
        return keys.error();
    w->keys = std::move(keys).value();
    w->weChat = std::make_unique<SimGateway>(platform, core::Channel::WeChat);
    w->alipay = std::make_unique<SimGateway>(platform, core::Channel::Alipay);
    w->verifier = std::make_unique<SimVerifier>();

    sql::Database &db = *w->database;
    w->audit = std::make_unique<sql::SqlAuditWriter>(db);
    w->idempotency = std::make_unique<sql::SqlIdempotencyStore>(db);
    w->payments = std::make_unique<sql::SqlPaymentStore>(db);
    w->orders = std::make_unique<sql::SqlOrderRepository>(db);
    w->callbackStore = std::make_unique<sql::SqlCallbackStore>(db);
    w->modes = std::make_unique<sql::SqlCallbackModeStore>(db);
    w->history = std::make_unique<sql::SqlCallbackHistory>(db);
    w->compensationStore = std::make_unique<sql::SqlCompensationStore>(db);
    w->refundStore = std::make_unique<sql::SqlRefundStore>(db);
    w->patrolStore = std::make_unique<sql::SqlPatrolStore>(db);
    w->closeStore = std::make_unique<sql::SqlOrderCloseStore>(db);
    w->outboxStore = std::make_unique<sql::SqlOutboxStore>(db);

    SimWorld *self = w.get();
    auto gateways = [self](core::Channel channel) { return self->gateway(channel); };

    w->setup = std::make_unique<core::SetupService>(*w->orders);
    w->tokens = std::make_unique<core::TokenIssuer>(*w->payments, w->keys->tokens());
    core::ConfirmPipelineOptions confirmOptions;
    confirmOptions.notifyUrlWeChat = QStringLiteral("http://127.0.0.1/api/v1/callbacks/wechat");
    confirmOptions.notifyUrlAlipay = QStringLiteral("http://127.0.0.1/api/v1/callbacks/alipay");
    w->confirm = std::make_unique<core::ConfirmPipeline>(*w->idempotency, &w->keys->idempotency(), w->keys->tokens(),
                                                         w->keys->locks(), *w->payments, gateways, clock,
                                                         confirmOptions);

    core::CallbackPipelineOptions callbackOptions;
    callbackOptions.weChatMchId = SimPlatform::kWeChatMchId;
    callbackOptions.alipaySellerId = SimPlatform::kAlipaySellerId;
    callbackOptions.qaEnabled = options.qaSwitches;
    callbackOptions.agentId = QStringLiteral("sim-agent");
    callbackOptions.history = w->history.get();
    callbackOptions.onEvent = [&probe](const QString &event) { probe.pipelineEvents.append(event); };
    callbackOptions.testHook = [&probe](core::CallbackHookPoint point, const core::CallbackHookContext &) {
        if (probe.crashAt && *probe.crashAt == point) {
            probe.crashAt.reset();
            probe.crashed = true;
            return core::CallbackHookAction::Abort;
        }
        return core::CallbackHookAction::Continue;
    };
    w->callbacks = std::make_unique<core::CallbackPipeline>(*w->verifier, *w->callbackStore, *w->modes,
                                                            w->keys->locks(), &w->keys->seenProcessed(), clock,
                                                            callbackOptions);
    callbackOptions.oneCommit = false;
    callbackOptions.agentId = QStringLiteral("sim-agent-accepted-first");
    w->callbacksAcceptedFirst = std::make_unique<core::CallbackPipeline>(*w->verifier, *w->callbackStore, *w->modes,
                                                                         w->keys->locks(), &w->keys->seenProcessed(),
                                                                         clock, callbackOptions);
    callbackOptions.oneCommit = true;
    callbackOptions.agentId = QStringLiteral("sim-agent-memory-first");
    callbackOptions.testHook = nullptr; // a hook may pause: the event loop's try declines with one
    w->callbacksMemoryFirst = std::make_unique<core::CallbackPipeline>(*w->verifier, *w->callbackStore, *w->modes,
                                                                       w->keys->locks(), &w->keys->seenProcessed(),
                                                                       clock, callbackOptions);
    if (options.qaSwitches) {
        for (core::CallbackPipeline *pipeline :
             {w->callbacks.get(), w->callbacksAcceptedFirst.get(), w->callbacksMemoryFirst.get()}) {
            if (auto set = pipeline->setSwitches(options.switches); !set)
                return set.error();
        }
    }
    w->worker = std::make_unique<core::CallbackWorker>(*w->callbacks, *w->callbackStore, *w->modes, clock,
                                                       kWorkerMinAgeMs);
    w->worker->setGateways(gateways);

    w->compensations = std::make_unique<core::CompensationService>(*w->compensationStore, *w->audit);
    w->refunds = std::make_unique<core::RefundService>(*w->refundStore, gateways, clock);

    core::PatrolSettlement settlement;
    settlement.gateways = gateways;
    settlement.callbacks = w->callbacks.get();
    settlement.modes = w->modes.get();
    settlement.audit = w->audit.get();
    w->patrol = std::make_unique<core::Patrol>(*w->patrolStore, *w->compensations,
                                               core::PatrolOptions{kStuckPayingMs, kStuckAcceptedMs}, settlement);

    core::OrderCloserPorts closerPorts;
    closerPorts.gateways = gateways;
    closerPorts.callbacks = w->callbacks.get();
    closerPorts.modes = w->modes.get();
    closerPorts.audit = w->audit.get();
    core::OrderCloserOptions closerOptions;
    closerOptions.pendingTimeoutMs = kPendingTimeoutMs;
    w->closer = std::make_unique<core::OrderCloser>(*w->closeStore, closerOptions, closerPorts);

    core::OutboxDispatcherOptions outboxOptions;
    outboxOptions.dispatcherId = QStringLiteral("sim-dispatcher");
    outboxOptions.maxAttempts = 3;
    outboxOptions.claimLease = 30s;
    outboxOptions.leaseMargin = 15s;
    // The jitter is a fixed half: the backoff is then a function of the attempt alone.
    w->dispatcher = std::make_unique<core::OutboxDispatcher>(*w->outboxStore, handlers, clock, outboxOptions,
                                                             [] { return 0.5; });
    return w;
}

} // namespace payonce::simulation
