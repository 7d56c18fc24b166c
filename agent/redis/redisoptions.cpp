#include "redisoptions.h"

#include <QUrl>

namespace payonce::redis {

using core::Error;
using core::ErrorCode;

QString RedisOptions::endpoint() const
{
    return QStringLiteral("%1:%2/%3").arg(host).arg(port).arg(database);
}

core::Result<RedisOptions> RedisOptions::fromUrl(const QString &text)
{
    const QUrl url(text, QUrl::StrictMode);
    if (!url.isValid())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("the Redis URL is not valid: %1").arg(url.errorString()));
    if (url.scheme() == QLatin1String("rediss"))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("rediss:// (TLS) is not supported by this build; "
                                          "use redis:// on a trusted network"));
    if (url.scheme() != QLatin1String("redis"))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("a Redis URL starts with redis:// (got scheme \"%1\")")
                               .arg(url.scheme()));
    RedisOptions options;
    if (url.host().isEmpty())
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("the Redis URL has no host"));
    options.host = url.host();
    options.port = url.port(6379);
    if (options.port <= 0 || options.port > 65535)
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("the Redis URL has no valid port"));
    options.username = url.userName(QUrl::FullyDecoded);
    options.password = url.password(QUrl::FullyDecoded);
    if (!options.username.isEmpty() && options.password.isEmpty())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("the Redis URL names a user but no password "
                                          "(write redis://:password@host:port/db)"));
    QString path = url.path();
    if (path.startsWith(QLatin1Char('/')))
        path.remove(0, 1);
    if (!path.isEmpty()) {
        bool ok = false;
        options.database = path.toInt(&ok);
        if (!ok || options.database < 0)
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("the Redis URL's path must be a database number, got \"%1\"")
                                   .arg(path));
    }
    return options;
}

} // namespace payonce::redis
