#include "agentparts_p.h"

namespace payonce::app {

using core::Error;
using core::ErrorCode;

core::Result<void> AgentRuntime::Parts::openStorage()
{
    if (auto opened = openDatabase(); !opened)
        return opened;
    if (auto opened = openKeyStore(); !opened)
        return opened;
    openStores();
    return {};
}

/// Connected and migrated.
core::Result<void> AgentRuntime::Parts::openDatabase()
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

    return {};
}

core::Result<void> AgentRuntime::Parts::openKeyStore()
{
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

    return {};
}

/// The SQL adapters of the ports, and the breakers (whose modes live in the database).
void AgentRuntime::Parts::openStores()
{
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

} // namespace payonce::app
