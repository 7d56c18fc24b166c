#include "redisoptions.h"

#include <QStringList>

namespace payonce::redis {

using core::Error;
using core::ErrorCode;

QString RedisOptions::endpoint() const
{
    if (clusterMode()) {
        QStringList seeds;
        for (const config::HostPort &seed : clusterSeeds)
            seeds << seed.toString();
        return QStringLiteral("cluster %1").arg(seeds.join(u','));
    }
    if (sentinelMode())
        return QStringLiteral("sentinel master %1/%2").arg(masterName).arg(database);
    return QStringLiteral("%1:%2/%3").arg(host).arg(port).arg(database);
}

core::Result<RedisOptions> RedisOptions::fromUrl(const config::RedisUrl &url)
{
    if (url.embedded)
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("the embedded key store has no Redis URL; expected redis://host:port/db"));
    // AUTH with a user needs its password; without one Redis would answer with a
    // confusing WRONGPASS at the first command instead of a clear start-up error.
    if (!url.user.isEmpty() && url.password.isEmpty())
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("the Redis URL names a user but no password "
                                                                    "(write redis://:password@host:port/db)"));
    RedisOptions options;
    options.host = url.host;
    options.port = url.port;
    options.username = url.user;
    options.password = url.password;
    options.database = url.database;
    return options;
}

core::Result<RedisOptions> RedisOptions::fromUrl(const QString &text)
{
    // One parser for redis:// URLs in the whole agent: the configuration's.
    auto parsed = config::RedisUrl::parse(text);
    if (!parsed)
        return parsed.error();
    return fromUrl(parsed.value());
}

} // namespace payonce::redis
