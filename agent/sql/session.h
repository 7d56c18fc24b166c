#pragma once

#include "sqlerrors.h"

#include "core/common/result.h"
#include "core/ports/clock.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QVariantList>

#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

namespace payonce::sql {

/// One thread's open connection, handed to a unit of work by Database::write() or read().
/// Not thread-safe and never shared: it belongs to the thread that got it, for the length
/// of one call. Internal to the SQL adapters (QSqlQuery appears in its interface).
class Session {
public:
    Dialect dialect() const { return m_dialect; }

    /// Executes one statement. With binds, it is prepared and the values bound to '?'
    /// placeholders in order. A failure comes back classified (Duplicate, Busy, Unavailable,
    /// Misconfigured or Internal); `what` names the step for the log. A lost connection
    /// also marks the session broken, so the unit of work is retried on a fresh one.
    core::Result<QSqlQuery> exec(const QString &sql, const QVariantList &binds = {}, const QString &what = {});

    /// Executes and returns the affected-row count (the CAS and insert-if-absent answer).
    /// With binds, the statement is prepared once per connection and kept (see
    /// kPreparedStatements): its result is read inside this call, so nothing outside
    /// holds it when it runs again.
    core::Result<int> execAffected(const QString &sql, const QVariantList &binds = {}, const QString &what = {});

    /// Executes an INSERT into a table with an `id` key and returns the new row's id
    /// (RETURNING id on PostgreSQL, the driver's last insert id elsewhere). Prepared once
    /// per connection, as execAffected.
    core::Result<qint64> execInsertReturningId(const QString &insertSql, const QVariantList &binds = {},
                                               const QString &what = {});

    /// Inserts rows (each `columns` values, in the order of `insertHead`'s column list) into
    /// a table with an `id` key, as few statements as it takes: `insertHead` is "INSERT INTO
    /// t (a, b, ...)", and each statement is one multi-row VALUES list with RETURNING id
    /// (PostgreSQL, SQLite ≥ 3.35; on MariaDB the ids are the driver's last insert id and
    /// those after it, where InnoDB hands them out consecutively, else one INSERT a row) —
    /// one round trip for many rows. The new ids, in the order of `rows`. Statements hold 1, 2, 4, … up to 64 rows, so at most
    /// seven texts are kept prepared whatever the batch sizes. Inside the caller's
    /// transaction, if any.
    core::Result<QList<qint64>> execInsertManyReturningIds(const QString &insertHead, int columns,
                                                           const QList<QVariantList> &rows, const QString &what = {});

    /// A read whose rows are consumed inside the call, on a kept prepared statement as
    /// execAffected: `row` sees each row in order (an error from it ends the read and is
    /// returned). The same text run again from inside `row` gets a statement of its own.
    core::Result<void> forEachRow(const QString &sql, const QVariantList &binds,
                                  const std::function<core::Result<void>(const QSqlQuery &)> &row,
                                  const QString &what = {});

    /// Statements kept prepared per connection at most; texts beyond them are prepared per
    /// call (the agent has a few dozen distinct statements, so this only bounds a mistake).
    /// Qt's drivers prepare on every QSqlQuery::prepare(): QPSQL sends PREPARE, EXECUTE
    /// and, when the query goes, DEALLOCATE — three round trips for one statement.
    static constexpr int kPreparedStatements = 256;
    /// Finalises the kept statements (before the connection closes).
    void dropPreparedStatements();

    /// The time rows are stamped with (created_at, updated_at, ...): the Database's clock,
    /// so a simulation on a fake clock sees one time in every row and every decision.
    qint64 nowMs() const { return m_clock->nowMs(); }

    /// From here to the end of the open transaction, a statement that waits on another
    /// holder's row lock gives up after `ms` (PostgreSQL lock_timeout; MariaDB
    /// innodb_lock_wait_timeout in whole seconds; SQLite waits on its one writer as always):
    /// it fails Unavailable, not Busy, so the unit of work is not run again, and
    /// lockWaitEnded() says why. Called before the transaction's first statement it costs
    /// no round trip of its own: PostgreSQL gets it with the BEGIN, and MariaDB's session
    /// keeps the bounded value for the next bounded transaction (a transaction that does not
    /// bound its waits puts the default back before its first statement).
    core::Result<void> boundLockWaits(int ms);
    /// A statement of this transaction gave up waiting on another holder (boundLockWaits).
    bool lockWaitEnded() const { return m_lockWaitEnded; }

    bool inTransaction() const { return m_inTransaction; }
    bool isBroken() const { return m_broken; }

private:
    /// MariaDB: whether a multi-row INSERT's auto-increment ids are consecutive (read once
    /// per connection).
    core::Result<bool> consecutiveInsertIds();
    std::optional<bool> m_consecutiveInsertIds;

    friend class Database;
    friend struct ThreadConnections;
    Session(Dialect dialect, QString connectionName, const core::Clock &clock);
    /// Runs `sql` on its kept prepared statement (prepared now if new; a one-off while the
    /// kept one is in use or the set is full), hands the executed statement to `use`, then
    /// finishes it.
    core::Result<void> runKept(const QString &sql, const QVariantList &binds, const QString &what,
                               const std::function<core::Result<void>(QSqlQuery &)> &use);
    struct KeptStatement {
        std::unique_ptr<QSqlQuery> query;
        bool inUse = false;
    };
    core::Error failure(const QSqlQuery &query, const QString &sql, const QString &what);
    /// A transaction is open but its BEGIN not sent yet (PostgreSQL and MariaDB: the first
    /// statement sends it, so that boundLockWaits() can ride with it); empty otherwise.
    QString m_pendingBegin;
    /// Sends the pending BEGIN, if any (with MariaDB's default lock wait put back first when
    /// a bounded transaction left it changed).
    core::Result<void> sendPendingBegin();
    /// exec() of a session setting ahead of the pending BEGIN, which stays pending.
    core::Result<QSqlQuery> execUnbegun(const QString &sql);
    /// MariaDB: the session's innodb_lock_wait_timeout as last set (connection set-up sets
    /// the default).
    int m_lockWaitSeconds = 0;
    int m_defaultLockWaitSeconds = 0;

    Dialect m_dialect;
    QString m_connectionName;
    const core::Clock *m_clock;
    QSqlDatabase m_db;
    bool m_inTransaction = false;
    bool m_lockWaitsBounded = false;
    bool m_lockWaitEnded = false;
    /// Database: a transaction begins with `beginSql`, sent with its first statement.
    void deferBegin(const QString &beginSql) { m_pendingBegin = beginSql; }
    /// No statement ran since deferBegin(): there is nothing to COMMIT or ROLLBACK.
    bool beginStillPending() const { return !m_pendingBegin.isEmpty(); }
    /// Ends boundLockWaits() with the transaction (Database, after COMMIT or ROLLBACK).
    void transactionEnded();
    bool m_broken = false;
    int m_depth = 0;                                   ///< units of work running on this session right now (nesting)
    std::unordered_map<QString, KeptStatement> m_kept; ///< by statement text
};

} // namespace payonce::sql
