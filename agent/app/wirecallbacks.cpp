#include "agentparts_p.h"

namespace payonce::app {

using core::Error;
using core::ErrorCode;

namespace {

/// after_lock_until_lost is one pause: once a held lock has been lost (the agent was
/// frozen past its lease and thawed), the holders still waiting and every later
/// delivery go on at once. Holding on, a live watchdog would renew those locks for
/// ever and no agent could pay their orders.
decltype(core::CallbackPipelineOptions::testHook) pauseHook(core::CallbackHookPoint point, bool untilLost)
{
    auto pauseOver = std::make_shared<std::atomic<bool>>(false);
    return
        [point, untilLost, pauseOver](core::CallbackHookPoint at, const core::CallbackHookContext &context) {
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

} // namespace

core::Result<void> AgentRuntime::Parts::openCallbacks()
{
    if (auto made = openVerifiers(); !made)
        return made;
    core::CallbackPipelineOptions options = callbackOptions();
    if (auto installed = installTestPause(options); !installed)
        return installed;
    callbacks = std::make_unique<core::CallbackPipeline>(*verifier, *callbackStore, *callbackModes, keyStore->locks(),
                                                         &keyStore->seenProcessed(), clock, options);
    startCallbackWorker();
    return {};
}

core::Result<void> AgentRuntime::Parts::openVerifiers()
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
    return {};
}

core::CallbackPipelineOptions AgentRuntime::Parts::callbackOptions()
{
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
    return options;
}

core::Result<void> AgentRuntime::Parts::installTestPause(core::CallbackPipelineOptions &options) const
{
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
        options.testHook = pauseHook(*pausePoint, untilLost);
    }
    return {};
}

void AgentRuntime::Parts::startCallbackWorker()
{
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
}

} // namespace payonce::app
