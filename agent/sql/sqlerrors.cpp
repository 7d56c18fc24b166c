#include "sqlerrors.h"

#include <QSqlError>
#include <QStringList>

namespace payonce::sql {

namespace {

SqlErrorKind classifySqlite(const QString &code)
{
    // Extended result codes are on in Qt 6.4: 2067 SQLITE_CONSTRAINT_UNIQUE, 1555
    // SQLITE_CONSTRAINT_PRIMARYKEY; 5 SQLITE_BUSY, 517 SQLITE_BUSY_SNAPSHOT, 6 SQLITE_LOCKED,
    // 261 SQLITE_BUSY_RECOVERY.
    static const QStringList unique{QStringLiteral("2067"), QStringLiteral("1555")};
    static const QStringList busy{QStringLiteral("5"), QStringLiteral("517"), QStringLiteral("6"),
                                  QStringLiteral("261"), QStringLiteral("262")};
    if (unique.contains(code))
        return SqlErrorKind::UniqueViolation;
    if (busy.contains(code))
        return SqlErrorKind::Retryable;
    return SqlErrorKind::Other;
}

SqlErrorKind classifyPostgres(const QString &code, const QSqlError &error)
{
    if (code == u"23505")
        return SqlErrorKind::UniqueViolation;
    // 40001 serialization_failure, 40P01 deadlock_detected, 55P03 lock_not_available
    if (code == u"40001" || code == u"40P01" || code == u"55P03")
        return SqlErrorKind::Retryable;
    if (code == u"28P01" || code == u"28000")
        return SqlErrorKind::AuthFailed;
    // Class 08 connection exceptions; 57P01-57P03 the server is shutting down / restarting.
    if (code.startsWith(u"08") || code == u"57P01" || code == u"57P02" || code == u"57P03")
        return SqlErrorKind::ConnectionLost;
    // libpq reports a dropped socket without any SQLSTATE; Qt then has only the text.
    if (code.isEmpty()) {
        const QString text = error.databaseText() + u' ' + error.driverText();
        // Checked first: a refused login also reads "connection to server ... failed".
        if (text.contains(u"password authentication failed") || text.contains(u"no pg_hba.conf entry"))
            return SqlErrorKind::AuthFailed;
        if (text.contains(u"server closed the connection") || text.contains(u"no connection to the server")
            || text.contains(u"terminating connection") || text.contains(u"could not receive data")
            || text.contains(u"could not send data") || text.contains(u"connection to server")
            || text.contains(u"Unable to connect"))
            return SqlErrorKind::ConnectionLost;
    }
    return SqlErrorKind::Other;
}

SqlErrorKind classifyMariaDb(const QString &code)
{
    bool ok = false;
    const int n = code.toInt(&ok);
    if (!ok)
        return SqlErrorKind::Other;
    switch (n) {
    case 1062: // ER_DUP_ENTRY
        return SqlErrorKind::UniqueViolation;
    case 1213: // ER_LOCK_DEADLOCK
    case 1205: // ER_LOCK_WAIT_TIMEOUT
    case 1020: // ER_CHECKREAD: record changed since last read
    case 4031: // ER_CLIENT_INTERACTION_TIMEOUT
        return n == 4031 ? SqlErrorKind::ConnectionLost : SqlErrorKind::Retryable;
    case 1045: // ER_ACCESS_DENIED_ERROR
    case 1044: // ER_DBACCESS_DENIED_ERROR
        return SqlErrorKind::AuthFailed;
    case 2002: // CR_CONNECTION_ERROR
    case 2003: // CR_CONN_HOST_ERROR
    case 2006: // CR_SERVER_GONE_ERROR
    case 2013: // CR_SERVER_LOST
    case 2026: // CR_SSL_CONNECTION_ERROR
    case 2055: // CR_SERVER_LOST_EXTENDED
    case 1927: // ER_CONNECTION_KILLED
    case 1053: // ER_SERVER_SHUTDOWN
        return SqlErrorKind::ConnectionLost;
    default: return SqlErrorKind::Other;
    }
}

} // namespace

SqlErrorKind classifySqlError(Dialect dialect, const QSqlError &error)
{
    const QString code = error.nativeErrorCode();
    switch (dialect) {
    case Dialect::Sqlite: return classifySqlite(code);
    case Dialect::PostgreSql: return classifyPostgres(code, error);
    case Dialect::MariaDb: return classifyMariaDb(code);
    }
    return SqlErrorKind::Other;
}

core::Error toCoreError(Dialect dialect, const QSqlError &error, const QString &what)
{
    using core::ErrorCode;
    const QString detail = what + QStringLiteral(": ") + error.text().trimmed() + QStringLiteral(" [native code ")
                           + error.nativeErrorCode() + u']';
    switch (classifySqlError(dialect, error)) {
    case SqlErrorKind::UniqueViolation:
        return core::Error::make(ErrorCode::Duplicate, detail, QStringLiteral("already exists"));
    case SqlErrorKind::Retryable:
        return core::Error::make(ErrorCode::Busy, detail, QStringLiteral("the database is busy, try again"));
    case SqlErrorKind::ConnectionLost:
        return core::Error::make(ErrorCode::Unavailable, detail, QStringLiteral("the database is unavailable"));
    case SqlErrorKind::AuthFailed:
        return core::Error::make(ErrorCode::Misconfigured, detail,
                                 QStringLiteral("the database refused the credentials"));
    case SqlErrorKind::Other: break;
    }
    return core::Error::make(ErrorCode::Internal, detail, QStringLiteral("internal database error"));
}

} // namespace payonce::sql
