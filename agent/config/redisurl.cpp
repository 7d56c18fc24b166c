#include "redisurl.h"

#include "hostport.h"
#include "urlparts_p.h"

#include <QUrl>

namespace payonce::config {

namespace {

core::Error invalid(const QString &detail)
{
    return core::Error::make(core::ErrorCode::Misconfigured, QStringLiteral("invalid Redis URL: ") + detail);
}

} // namespace

core::Result<RedisUrl> RedisUrl::parse(const QString &text)
{
    const QString trimmed = text.trimmed();
    RedisUrl url;
    if (trimmed == u"embedded")
        return url;
    if (trimmed.isEmpty())
        return invalid(QStringLiteral("it is empty (expected \"embedded\" or redis://host:port/db)"));

    url.embedded = false;
    url.port = 6379;
    const qsizetype sep = trimmed.indexOf(u"://");
    if (sep < 0)
        return invalid(QStringLiteral("expected \"embedded\" or redis://[:password@]host:port/db"));
    const QString scheme = trimmed.left(sep).toLower();
    if (scheme == u"rediss")
        return invalid(QStringLiteral("rediss:// (TLS) is not supported; use redis://"));
    if (scheme != u"redis")
        return invalid(QStringLiteral("unknown scheme \"%1\" (expected redis or embedded)").arg(scheme));

    QStringView rest = QStringView(trimmed).mid(sep + 3);
    if (rest.contains(u'?') || rest.contains(u'#'))
        return invalid(QStringLiteral("query parameters and fragments are not supported"));

    auto [user, password] = detail::takeUserInfo(rest);
    url.user = std::move(user);
    url.password = std::move(password);

    const qsizetype slash = rest.indexOf(u'/');
    const QStringView authority = slash < 0 ? rest : rest.left(slash);
    if (authority.isEmpty())
        return invalid(QStringLiteral("the host is missing"));
    auto hostPort = HostPort::parse(authority, url.port);
    if (!hostPort)
        return invalid(hostPort.error().internalMessage);
    url.host = hostPort->host;
    url.port = hostPort->port;

    if (slash >= 0 && slash + 1 < rest.size()) {
        const QStringView db = rest.mid(slash + 1);
        const auto number = detail::parseDigits(db, 9);
        if (!number)
            return invalid(QStringLiteral("database \"%1\" is not a number >= 0").arg(db));
        url.database = int(*number);
    }
    return url;
}

QString RedisUrl::redacted() const
{
    if (embedded)
        return QStringLiteral("embedded");
    QString userInfo;
    if (!user.isEmpty() || !password.isEmpty()) {
        userInfo = QString::fromLatin1(QUrl::toPercentEncoding(user))
                   + (password.isEmpty() ? QString() : QStringLiteral(":***")) + QChar(u'@');
    }
    const HostPort hp{host, port};
    return QStringLiteral("redis://") + userInfo + hp.toString() + QChar(u'/') + QString::number(database);
}

} // namespace payonce::config
