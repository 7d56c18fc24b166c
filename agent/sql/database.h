#pragma once

#include "session.h"

#include "config/databaseurl.h"
#include "core/common/result.h"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

namespace payonce::sql {

struct DatabaseOptions {
    config::DatabaseUrl url;
    /// Connecting gives up after this long (a listener that never answers included).
    int connectTimeoutMs = 5000;
    /// How many times one unit of work runs at most when it meets busy, deadlock,
    /// serialization or a lost connection before COMMIT.
    int maxAttempts = 8;
    /// What rows are stamped with; null: the system clock. Must outlive the Database.
    const core::Clock *clock = nullptr;
};

/// The database, seen from any thread. Each thread gets its own Qt Sql connection (Qt 6.4
/// cannot move one between threads), opened on first use, reopened when it broke, and
/// removed when the thread ends.
///
/// Units of work:
/// - write(): one transaction (SQLite BEGIN IMMEDIATE, so there is one writer and no
///   deferred-lock upgrade deadlock, the writers of one file in this process queued on a
///   mutex; PostgreSQL and MariaDB at READ COMMITTED). Busy,
///   deadlock and serialization failures, and a connection lost before COMMIT, roll back
///   and run the work again, a bounded number of times with jittered backoff — so the
///   work must have no effects outside the transaction. A connection lost during COMMIT is
///   reported as Unavailable ("outcome unknown") and not retried. A write() inside a
///   write() on the same thread joins the outer transaction.
/// - read(): statements in autocommit, retried the same way on a lost connection.
/// Thread-safe; the work runs on the calling thread.
class Database {
public:
    explicit Database(DatabaseOptions options);
    ~Database();
    Database(const Database &) = delete;
    Database &operator=(const Database &) = delete;

    /// MariaDB's innodb_lock_wait_timeout for every connection (a lock wait ends as 1205,
    /// retried as contention); statements with a bound of their own restore it after.
    static constexpr int kLockWaitTimeoutSeconds = 15;
    /// SQLite's page cache per connection, in KiB (PRAGMA cache_size=-N): a bound of its
    /// own rather than the library's build default (docs/design.md, "Memory").
    static constexpr int kSqlitePageCacheKiB = 4096;

    /// Waits until every other thread that used a Database has closed its connections.
    /// A thread's connections close in its thread_local teardown, which runs after
    /// QThread::wait() has returned: a process that leaves main() right after joining its
    /// pools would tear Qt Sql's globals down under it. false: still open after `timeout`.
    static bool waitForThreadConnectionsClosed(std::chrono::milliseconds timeout);

    Dialect dialect() const { return m_options.url.dialect; }
    const DatabaseOptions &options() const { return m_options; }
    const core::Clock &clock() const { return m_options.clock ? *m_options.clock : m_systemClock; }

    /// Opens the calling thread's connection afresh, once, within connectTimeoutMs: the
    /// agent calls it at start to fail fast with a clear error. Misconfigured for refused
    /// credentials or a missing driver, Unavailable for an unreachable server.
    core::Result<void> connect();

    /// Is the database reachable from this thread now? One attempt, no retries (for
    /// /readyz): the thread's connection if it is open, else a new one within
    /// connectTimeoutMs.
    core::Result<void> ping();

    template <typename Work>
    auto write(Work &&work)
    {
        return run<Work>(Unit::Write, std::forward<Work>(work));
    }
    template <typename Work>
    auto read(Work &&work)
    {
        return run<Work>(Unit::Read, std::forward<Work>(work));
    }

private:
    enum class Unit {
        Read,
        Write
    };
    using ErasedWork = std::function<core::Result<void>(Session &)>;

    template <typename Work>
    auto run(Unit unit, Work &&work) -> std::invoke_result_t<Work, Session &>
    {
        using R = std::invoke_result_t<Work, Session &>;
        std::optional<R> out;
        const core::Result<void> status = runErased(unit, [&](Session &session) -> core::Result<void> {
            out.emplace(work(session));
            if (!out->ok())
                return out->error();
            return {};
        });
        if (!status.ok())
            return status.error();
        return std::move(*out);
    }

    core::Result<void> runErased(Unit unit, const ErasedWork &work);
    core::Result<void> runTransactionOnce(Session &session, const ErasedWork &work);
    core::Result<Session *> threadSession();
    void discardThreadSession();
    core::Result<void> openConnection(Session &session);
    QString beginStatement() const;

    DatabaseOptions m_options;
    core::SystemClock m_systemClock;
    quint64 m_id;
    /// SQLite: the one writer of this database file in the process (null elsewhere). Write
    /// units queue on it instead of on SQLite's busy handler, which polls with sleeps of
    /// up to 100 ms; recursive, so a thread holding it that writes through another
    /// Database on the same file meets SQLite's own lock, as before.
    std::shared_ptr<std::recursive_mutex> m_sqliteWriter;
    static thread_local bool m_commitOutcomeUnknown;
};

} // namespace payonce::sql
