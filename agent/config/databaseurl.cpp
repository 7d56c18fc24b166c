#include "databaseurl.h"

#include "hostport.h"
#include "urlparts_p.h"

#include <QUrl>

namespace payonce::config {

namespace {

core::Error invalid(const QString &detail)
{
    return core::Error::make(core::ErrorCode::Misconfigured, QStringLiteral("invalid database URL: ") + detail);
}

// Characters that would make the redacted form ambiguous are re-encoded.
QString encodeUserInfo(const QString &part)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(part));
}

} // namespace

core::Result<DatabaseUrl> DatabaseUrl::parse(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty())
        return invalid(QStringLiteral("it is empty (expected sqlite:PATH, postgresql://... or mariadb://...)"));

    const qsizetype colon = trimmed.indexOf(u':');
    const QString scheme = colon < 0 ? QString() : trimmed.left(colon).toLower();

    DatabaseUrl url;
    if (scheme == u"sqlite") {
        url.dialect = Dialect::Sqlite;
        url.sqlitePath = trimmed.mid(colon + 1);
        if (url.sqlitePath.isEmpty())
            return invalid(QStringLiteral("sqlite: needs a file path, e.g. sqlite:./payonce-data/payonce.db"));
        return url;
    }
    if (scheme == u"postgresql" || scheme == u"postgres") {
        url.dialect = Dialect::PostgreSql;
        url.port = 5432;
    } else if (scheme == u"mariadb" || scheme == u"mysql") {
        url.dialect = Dialect::MariaDb;
        url.port = 3306;
    } else if (colon < 0) {
        return invalid(
            QStringLiteral("the scheme is missing (expected sqlite:PATH, postgresql://... or mariadb://...)"));
    } else {
        return invalid(QStringLiteral("unknown scheme \"%1\" (expected sqlite, postgresql or mariadb)").arg(scheme));
    }

    QStringView rest = QStringView(trimmed).mid(colon + 1);
    if (!rest.startsWith(u"//"))
        return invalid(QStringLiteral("expected \"%1://\" after the scheme").arg(scheme));
    rest = rest.mid(2);

    if (rest.contains(u'?') || rest.contains(u'#'))
        return invalid(QStringLiteral("query parameters and fragments are not supported"));

    // The last '@' ends the user info; the first '/' after it starts the database name.
    const bool hasUserInfo = rest.contains(u'@');
    QStringView hostAndPath = rest;
    auto [user, password] = detail::takeUserInfo(hostAndPath);
    if (hasUserInfo && user.isEmpty())
        return invalid(QStringLiteral("the user name before '@' is empty"));
    url.user = std::move(user);
    url.password = std::move(password);

    const qsizetype slash = hostAndPath.indexOf(u'/');
    if (slash < 0)
        return invalid(QStringLiteral("the database name is missing (expected .../DATABASE)"));
    const QStringView authority = hostAndPath.left(slash);
    const QStringView path = hostAndPath.mid(slash + 1);
    if (authority.isEmpty())
        return invalid(QStringLiteral("the host is missing"));

    auto hostPort = HostPort::parse(authority, url.port);
    if (!hostPort)
        return invalid(hostPort.error().internalMessage);
    url.host = hostPort->host;
    url.port = hostPort->port;

    url.database = QUrl::fromPercentEncoding(path.toUtf8());
    if (url.database.isEmpty())
        return invalid(QStringLiteral("the database name is missing (expected .../DATABASE)"));
    if (url.database.contains(u'/'))
        return invalid(QStringLiteral("the database name must not contain '/'"));
    return url;
}

QString DatabaseUrl::redacted() const
{
    if (dialect == Dialect::Sqlite)
        return QStringLiteral("sqlite:") + sqlitePath;
    QString userInfo;
    if (!user.isEmpty())
        userInfo = encodeUserInfo(user) + (password.isEmpty() ? QString() : QStringLiteral(":***")) + QChar(u'@');
    const HostPort hp{host, port};
    return dialectName(dialect) + QStringLiteral("://") + userInfo + hp.toString() + QChar(u'/')
           + encodeUserInfo(database);
}

QString DatabaseUrl::dialectName(Dialect dialect)
{
    switch (dialect) {
    case Dialect::Sqlite: return QStringLiteral("sqlite");
    case Dialect::PostgreSql: return QStringLiteral("postgresql");
    case Dialect::MariaDb: return QStringLiteral("mariadb");
    }
    Q_UNREACHABLE();
}

} // namespace payonce::config
