#include "agentparts_p.h"

namespace payonce::app {

/// Where the platforms send notifications: public_base_url, or the listen address.
std::chrono::milliseconds AgentRuntime::Parts::callbackLockTtl() const
{
    return std::max(core::CallbackPipelineOptions{}.lockTtl, std::chrono::milliseconds(4LL * config.redisTimeoutMs));
}

QString AgentRuntime::Parts::callbackBaseUrl() const
{
    return config.publicBaseUrl.isEmpty() ? QStringLiteral("http://") + config.listen.toString() : config.publicBaseUrl;
}

std::chrono::milliseconds AgentRuntime::Parts::confirmLockTtl() const
{
    // The key store refuses a lock TTL below 3 command timeouts (one hung renewal must not
    // cost the lease); keep the confirm lock above that whatever redis_timeout_ms says.
    return std::max(core::ConfirmPipelineOptions{}.lockTtl, std::chrono::milliseconds(4LL * config.redisTimeoutMs));
}

std::function<core::PaymentGateway *(core::Channel)> AgentRuntime::Parts::gatewayLookup()
{
    return [this](core::Channel channel) -> core::PaymentGateway * {
        const auto found = gateways.find(channel);
        return found == gateways.end() ? nullptr : found->second.get();
    };
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
