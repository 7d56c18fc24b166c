#include "session.h"

#include <algorithm>

#include <QSqlError>

namespace payonce::sql {

Session::Session(Dialect dialect, QString connectionName, const core::Clock &clock)
    : m_dialect(dialect), m_connectionName(std::move(connectionName)), m_clock(&clock)
{
}

core::Result<QSqlQuery> Session::exec(const QString &sql, const QVariantList &binds, const QString &what)
{
    if (auto begun = sendPendingBegin(); !begun)
        return begun.error();
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
    if (!ok)
        return failure(query, sql, what);
    return query;
}

core::Error Session::failure(const QSqlQuery &query, const QString &sql, const QString &what)
{
    if (!m_db.isOpen()) {
        // The driver gave up on the connection (QPSQL: PQstatus no longer OK after the server
        // went away): every later statement fails with "database not open" and no error
        // code at all. That is a lost connection, to be reopened, not an internal error.
        m_broken = true;
        return core::Error::make(core::ErrorCode::Unavailable,
                                 (what.isEmpty() ? sql.left(80) : what) + QStringLiteral(": the connection is closed"),
                                 QStringLiteral("the database is unavailable"));
    }
    const QSqlError error = query.lastError();
    if (classifySqlError(m_dialect, error) == SqlErrorKind::ConnectionLost)
        m_broken = true;
    core::Error mapped = toCoreError(m_dialect, error, what.isEmpty() ? sql.left(80) : what);
    if (m_lockWaitsBounded && mapped.code == core::ErrorCode::Busy) {
        m_lockWaitEnded = true;
        mapped.code = core::ErrorCode::Unavailable;
        mapped.internalMessage += QStringLiteral(" (gave up waiting on another holder's lock)");
    }
    return mapped;
}

core::Result<void> Session::boundLockWaits(int ms)
{
    switch (m_dialect) {
    case Dialect::PostgreSql: {
        const QString set = QStringLiteral("SET LOCAL lock_timeout = %1").arg(ms);
        if (m_pendingBegin.isEmpty()) {
            if (auto done = exec(set); !done)
                return done.error();
            break;
        }
        // One round trip: the BEGIN and the SET as one simple query. Not forward-only, so
        // the driver reads every result and a failed SET is seen here.
        const QString both = m_pendingBegin + QStringLiteral("; ") + set;
        m_pendingBegin.clear();
        QSqlQuery query(m_db);
        if (!query.exec(both))
            return failure(query, both, QStringLiteral("begin, lock waits bounded"));
        while (query.nextResult()) {
        }
        if (query.lastError().isValid())
            return failure(query, both, QStringLiteral("begin, lock waits bounded"));
        break;
    }
    case Dialect::MariaDb: {
        const int seconds = std::max(1, ms / 1000);
        if (m_lockWaitSeconds != seconds) {
            if (auto set = execUnbegun(QStringLiteral("SET SESSION innodb_lock_wait_timeout = %1").arg(seconds)); !set)
                return set.error();
            m_lockWaitSeconds = seconds;
        }
        break;
    }
    case Dialect::Sqlite: break;
    }
    m_lockWaitsBounded = true;
    return {};
}

core::Result<void> Session::sendPendingBegin()
{
    if (m_pendingBegin.isEmpty())
        return {};
    if (m_dialect == Dialect::MariaDb && !m_lockWaitsBounded && m_lockWaitSeconds != m_defaultLockWaitSeconds) {
        // A bounded transaction before this one left its value: this one waits as long as
        // every other.
        if (auto set = execUnbegun(
                QStringLiteral("SET SESSION innodb_lock_wait_timeout = %1").arg(m_defaultLockWaitSeconds));
            !set)
            return set.error();
        m_lockWaitSeconds = m_defaultLockWaitSeconds;
    }
    const QString begin = m_pendingBegin;
    m_pendingBegin.clear();
    if (auto begun = exec(begin, {}, QStringLiteral("begin")); !begun)
        return begun.error();
    return {};
}

core::Result<QSqlQuery> Session::execUnbegun(const QString &sql)
{
    // A session setting, sent before the pending BEGIN (MariaDB applies it to the
    // transaction that begins next).
    const QString pending = m_pendingBegin;
    m_pendingBegin.clear();
    auto done = exec(sql);
    m_pendingBegin = pending;
    return done;
}

void Session::transactionEnded()
{
    m_pendingBegin.clear();
    m_lockWaitsBounded = false;
    m_lockWaitEnded = false;
}

core::Result<void> Session::runKept(const QString &sql, const QVariantList &binds, const QString &what,
                                    const std::function<core::Result<void>(QSqlQuery &)> &use)
{
    if (auto begun = sendPendingBegin(); !begun)
        return begun;
    KeptStatement *kept = nullptr;
    if (auto found = m_kept.find(sql); found != m_kept.end()) {
        if (!found->second.inUse)
            kept = &found->second;
    } else if (m_kept.size() < std::size_t(kPreparedStatements)) {
        auto query = std::make_unique<QSqlQuery>(m_db);
        query->setForwardOnly(true);
        if (!query->prepare(sql))
            return failure(*query, sql, what);
        kept = &m_kept.emplace(sql, KeptStatement{std::move(query), false}).first->second;
    }
    std::unique_ptr<QSqlQuery> oneOff;
    if (!kept) {
        oneOff = std::make_unique<QSqlQuery>(m_db);
        oneOff->setForwardOnly(true);
        if (!oneOff->prepare(sql))
            return failure(*oneOff, sql, what);
    }
    QSqlQuery &query = kept ? *kept->query : *oneOff;
    for (qsizetype i = 0; i < binds.size(); ++i)
        query.bindValue(int(i), binds.at(i));
    if (!query.exec()) {
        const core::Error error = failure(query, sql, what);
        query.finish();
        return error;
    }
    if (kept)
        kept->inUse = true;
    auto used = use(query);
    query.finish();
    if (kept)
        kept->inUse = false;
    return used;
}

void Session::dropPreparedStatements()
{
    m_kept.clear();
}

core::Result<int> Session::execAffected(const QString &sql, const QVariantList &binds, const QString &what)
{
    if (binds.isEmpty()) {
        auto query = exec(sql, binds, what);
        if (!query)
            return query.error();
        return query.value().numRowsAffected();
    }
    int affected = 0;
    auto ran = runKept(sql, binds, what, [&](QSqlQuery &query) -> core::Result<void> {
        affected = query.numRowsAffected();
        return {};
    });
    if (!ran)
        return ran.error();
    return affected;
}

core::Result<qint64> Session::execInsertReturningId(const QString &insertSql, const QVariantList &binds,
                                                    const QString &what)
{
    const bool postgres = m_dialect == Dialect::PostgreSql;
    qint64 id = 0;
    auto ran = runKept(postgres ? insertSql + QStringLiteral(" RETURNING id") : insertSql, binds, what,
                       [&](QSqlQuery &query) -> core::Result<void> {
                           if (postgres)
                               id = query.next() ? query.value(0).toLongLong() : qint64(0);
                           else
                               id = query.lastInsertId().toLongLong();
                           return {};
                       });
    if (!ran)
        return ran.error();
    return id;
}

core::Result<QList<qint64>> Session::execInsertManyReturningIds(const QString &insertHead, int columns,
                                                                const QList<QVariantList> &rows, const QString &what)
{
    constexpr qsizetype kMostRowsPerStatement = 64;
    QList<qint64> ids;
    ids.reserve(rows.size());
    QString oneRow = QStringLiteral("(?");
    for (int c = 1; c < columns; ++c)
        oneRow += QStringLiteral(", ?");
    oneRow += u')';
    for (qsizetype done = 0; done < rows.size();) {
        // The largest power of two that fits what is left.
        qsizetype chunk = kMostRowsPerStatement;
        while (chunk > rows.size() - done)
            chunk /= 2;
        QVariantList binds;
        binds.reserve(chunk * columns);
        for (qsizetype r = done; r < done + chunk; ++r) {
            Q_ASSERT(rows.at(r).size() == columns);
            binds += rows.at(r);
        }
        QString sql = insertHead + QStringLiteral(" VALUES ") + oneRow;
        for (qsizetype r = 1; r < chunk; ++r)
            sql += QStringLiteral(", ") + oneRow;
        QList<qint64> chunkIds;
        chunkIds.reserve(chunk);
        core::Result<void> ran;
        if (m_dialect == Dialect::MariaDb) {
            // Qt's QMYSQL reads no result set from a prepared statement that returns rows
            // without being a SELECT, so no RETURNING here: a multi-row INSERT's ids are
            // consecutive from the first (the driver's last insert id) when InnoDB hands
            // them out so; otherwise one INSERT a row.
            auto consecutive = consecutiveInsertIds();
            if (!consecutive)
                return consecutive.error();
            if (!consecutive.value()) {
                for (qsizetype r = done; r < done + chunk; ++r) {
                    auto id = execInsertReturningId(insertHead + QStringLiteral(" VALUES ") + oneRow, rows.at(r), what);
                    if (!id)
                        return id.error();
                    chunkIds.append(id.value());
                }
            } else {
                ran = runKept(sql, binds, what, [&](QSqlQuery &query) -> core::Result<void> {
                    const qint64 first = query.lastInsertId().toLongLong();
                    if (query.numRowsAffected() == chunk && first > 0) {
                        for (qsizetype r = 0; r < chunk; ++r)
                            chunkIds.append(first + r);
                    }
                    return {};
                });
            }
        } else {
            ran = runKept(sql + QStringLiteral(" RETURNING id"), binds, what,
                          [&](QSqlQuery &query) -> core::Result<void> {
                              while (query.next())
                                  chunkIds.append(query.value(0).toLongLong());
                              return {};
                          });
        }
        if (!ran)
            return ran.error();
        if (chunkIds.size() != chunk)
            return core::Error::make(
                core::ErrorCode::Internal,
                QStringLiteral("%1: %2 rows inserted, %3 ids returned").arg(what).arg(chunk).arg(chunkIds.size()));
        // The key of each row comes from its sequence (or rowid) as the rows are inserted, in
        // the VALUES list's order: ascending ids are the rows' own, whatever order RETURNING
        // hands them back in.
        std::sort(chunkIds.begin(), chunkIds.end());
        ids += chunkIds;
        done += chunk;
    }
    return ids;
}

core::Result<bool> Session::consecutiveInsertIds()
{
    if (m_consecutiveInsertIds)
        return *m_consecutiveInsertIds;
    // 0 (traditional) and 1 (consecutive, MariaDB's default) give a multi-row INSERT
    // consecutive values; 2 (interleaved) does not, nor does an increment above 1 (Galera).
    auto query = exec(QStringLiteral("SELECT @@innodb_autoinc_lock_mode, @@auto_increment_increment"), {},
                      QStringLiteral("auto-increment settings"));
    if (!query)
        return query.error();
    if (!query.value().next())
        return core::Error::make(core::ErrorCode::Internal, QStringLiteral("auto-increment settings: no row"));
    m_consecutiveInsertIds = query.value().value(0).toInt() <= 1 && query.value().value(1).toInt() == 1;
    return *m_consecutiveInsertIds;
}

core::Result<void> Session::forEachRow(const QString &sql, const QVariantList &binds,
                                       const std::function<core::Result<void>(const QSqlQuery &)> &row,
                                       const QString &what)
{
    return runKept(sql, binds, what, [&](QSqlQuery &query) -> core::Result<void> {
        while (query.next()) {
            if (auto handled = row(query); !handled)
                return handled;
        }
        return {};
    });
}

} // namespace payonce::sql
