#include "keystorefactory.h"

#include "embeddedkeystore.h"
#include "rediskeystore.h"

namespace payonce::redis {

core::Result<std::unique_ptr<core::KeyStore>> openKeyStore(const KeyStoreSettings &settings,
                                                           core::FenceEpochSource &epochs)
{
    if (settings.redis.embedded) {
        if (settings.severalInstances)
            return core::Error::make(
                core::ErrorCode::Misconfigured,
                QStringLiteral("the embedded key store serves a single instance: with several agents "
                               "each would hold its own locks and tokens; give --redis=redis://host:port/db"));
        auto store = EmbeddedKeyStore::create(epochs);
        if (!store.ok())
            return store.error();
        return std::unique_ptr<core::KeyStore>(std::move(store).value());
    }
    auto options = RedisOptions::fromUrl(settings.redis);
    if (!options.ok())
        return options.error();
    RedisOptions redisOptions = options.value();
    redisOptions.connectTimeout = settings.connectTimeout;
    redisOptions.commandTimeout = settings.commandTimeout;
    redisOptions.sentinels = settings.sentinels;
    redisOptions.masterName = settings.masterName;
    redisOptions.sentinelPassword = settings.sentinelPassword;
    redisOptions.clusterSeeds = settings.clusterSeeds;
    return std::unique_ptr<core::KeyStore>(std::make_unique<RedisKeyStore>(redisOptions, epochs));
}

} // namespace payonce::redis
