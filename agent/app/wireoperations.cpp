#include "agentparts_p.h"

namespace payonce::app {

using core::Error;
using core::ErrorCode;

core::Result<void> AgentRuntime::Parts::openOperations()
{
    startOutbox();
    openRefunds();
    openPatrol();
    openCloser();
    return {};
}

void AgentRuntime::Parts::startOutbox()
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
}

void AgentRuntime::Parts::openRefunds()
{
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
}

void AgentRuntime::Parts::openPatrol()
{
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
}

void AgentRuntime::Parts::openCloser()
{
    // Order close: PENDING orders past close.pending_timeout_ms are closed at their
    // platform (behind the breakers), then CLOSED; a trade found paid is settled through
    // the callback path instead. tryRunOnce keeps runs from overlapping.
    closeStore = std::make_unique<sql::SqlOrderCloseStore>(*database);
    core::OrderCloserPorts closerPorts;
    closerPorts.gateways = gatewayLookup();
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

} // namespace payonce::app
