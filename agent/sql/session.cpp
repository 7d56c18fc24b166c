#include "session.h"

#include <QSqlError>

namespace payonce::sql {

Session::Session(Dialect dialect, QString connectionName, const core::Clock &clock)
    : m_dialect(dialect), m_connectionName(std::move(connectionName)), m_clock(&clock)
{
}

core::Result<QSqlQuery> Session::exec(const QString &sql, const QVariantList &binds, const QString &what)
{
    QSqlQuery query(m_db);
    query.setForwardOnly(true);
    bool ok = false;
    if (binds.isEmpty()) {
        ok = query.exec(sql);
    } else {
        ok = query.prepare(sql);
        if (ok) {
            for (const QVariant &value : binds)
                query.addBindValue(value);
            ok = query.exec();
        }
    }
    if (!ok && !m_db.isOpen()) {
        // The driver gave up on the connection (QPSQL: PQstatus no longer OK after the server
        // went away): every later statement fails with "database not open" and no error
        // code at all. That is a lost connection, to be reopened, not an internal error.
        m_broken = true;
        return core::Error::make(core::ErrorCode::Unavailable,
                                 (what.isEmpty() ? sql.left(80) : what) + QStringLiteral(": the connection is closed"),
                                 QStringLiteral("the database is unavailable"));
    }
    if (!ok) {
        const QSqlError error = query.lastError();
        if (classifySqlError(m_dialect, error) == SqlErrorKind::ConnectionLost)
            m_broken = true;
        return toCoreError(m_dialect, error, what.isEmpty() ? sql.left(80) : what);
    }
    return query;
}

core::Result<int> Session::execAffected(const QString &sql, const QVariantList &binds, const QString &what)
{
    auto query = exec(sql, binds, what);
    if (!query)
        return query.error();
    return query.value().numRowsAffected();
}

core::Result<qint64> Session::execInsertReturningId(const QString &insertSql, const QVariantList &binds,
                                                    const QString &what)
{
    const bool postgres = m_dialect == Dialect::PostgreSql;
    auto query = exec(postgres ? insertSql + QStringLiteral(" RETURNING id") : insertSql, binds, what);
    if (!query)
        return query.error();
    QSqlQuery &q = query.value();
    if (postgres)
        return q.next() ? q.value(0).toLongLong() : qint64(0);
    return q.lastInsertId().toLongLong();
}

} // namespace payonce::sql
