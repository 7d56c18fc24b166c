#include "redisurl.h"

#include "hostport.h"

#include <QUrl>

#include <algorithm>

namespace payonce::config {

namespace {

core::Error invalid(const QString &detail)
{
    return core::Error::make(core::ErrorCode::Misconfigured,
                             QStringLiteral("invalid Redis URL: ") + detail);
}

QString decode(QStringView part)
{
    return QUrl::fromPercentEncoding(part.toUtf8());
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

    const qsizetype at = rest.lastIndexOf(u'@');
    if (at >= 0) {
        const QStringView userInfo = rest.left(at);
        const qsizetype colon = userInfo.indexOf(u':');
        url.user = decode(colon < 0 ? userInfo : userInfo.left(colon));
        if (colon >= 0)
            url.password = decode(userInfo.mid(colon + 1));
        rest = rest.mid(at + 1);
    }

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
        bool ok = false;
        const int number = db.toInt(&ok);
        const bool digitsOnly = std::all_of(db.begin(), db.end(), [](QChar c) { return c >= u'0' && c <= u'9'; });
        if (!ok || !digitsOnly || number < 0)
            return invalid(QStringLiteral("database \"%1\" is not a number >= 0").arg(db));
        url.database = number;
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
