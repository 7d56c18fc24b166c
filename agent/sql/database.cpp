#include "database.h"

#include "logging/categories.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSqlError>
#include <QThread>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace payonce::sql {

using core::Error;
using core::ErrorCode;

/// Threads whose ThreadConnections exist (their teardown not over yet), for
/// Database::waitForThreadConnectionsClosed().
std::mutex g_teardownMutex;
std::condition_variable g_teardownDone;
int g_threadsWithConnections = 0;
thread_local bool t_hasConnections = false;

/// This thread's sessions, one per Database. Destroyed when the thread ends, which closes
/// and unregisters the Qt Sql connections in the thread that owns them, as Qt requires.
struct ThreadConnections {
    std::map<quint64, std::unique_ptr<Session>> sessions;

    ThreadConnections()
    {
        std::lock_guard guard(g_teardownMutex);
        ++g_threadsWithConnections;
        t_hasConnections = true;
    }

    static void close(std::unique_ptr<Session> &session)
    {
        const QString name = session->m_connectionName;
        session->dropPreparedStatements(); // the driver's statements go while it is open
        session->m_db.close();
        session.reset(); // the last QSqlDatabase handle goes before removeDatabase()
        QSqlDatabase::removeDatabase(name);
    }

    ~ThreadConnections()
    {
        for (auto &[id, session] : sessions)
            close(session);
        std::lock_guard guard(g_teardownMutex);
        --g_threadsWithConnections;
        g_teardownDone.notify_all();
    }
};

namespace {

thread_local ThreadConnections t_connections;
std::atomic<quint64> g_nextDatabaseId{1};

QString driverFor(Dialect dialect)
{
    switch (dialect) {
    case Dialect::Sqlite: return QStringLiteral("QSQLITE");
    case Dialect::PostgreSql: return QStringLiteral("QPSQL");
    case Dialect::MariaDb: return QStringLiteral("QMYSQL");
    }
    return {};
}

QString packageFor(Dialect dialect)
{
    switch (dialect) {
    case Dialect::Sqlite: return QStringLiteral("libqt6sql6-sqlite");
    case Dialect::PostgreSql: return QStringLiteral("libqt6sql6-psql");
    case Dialect::MariaDb: return QStringLiteral("libqt6sql6-mysql");
    }
    return {};
}

/// The writer mutex of an SQLite file, shared by every Database on it in this process.
std::shared_ptr<std::recursive_mutex> sqliteWriterFor(const QString &path)
{
    static std::mutex guard;
    static std::map<QString, std::weak_ptr<std::recursive_mutex>> writers;
    const QString key = QFileInfo(path).absoluteFilePath();
    std::lock_guard lock(guard);
    std::weak_ptr<std::recursive_mutex> &slot = writers[key];
    std::shared_ptr<std::recursive_mutex> writer = slot.lock();
    if (!writer) {
        writer = std::make_shared<std::recursive_mutex>();
        slot = writer;
    }
    return writer;
}

void backoff(int attempt)
{
    // 2, 4, 8 … 64 ms, then a random point below it: contenders spread out instead of
    // colliding again in lockstep.
    const int ceiling = 2 << std::min(attempt, 5);
    QThread::msleep(1 + QRandomGenerator::global()->bounded(ceiling));
}

} // namespace

thread_local bool Database::m_commitOutcomeUnknown = false;

Database::Database(DatabaseOptions options) : m_options(std::move(options)), m_id(g_nextDatabaseId.fetch_add(1))
{
    if (m_options.url.dialect == Dialect::Sqlite)
        m_sqliteWriter = sqliteWriterFor(m_options.url.sqlitePath);
}

Database::~Database()
{
    // Other threads' connections are closed when those threads end; they hold no pointer
    // back to this object.
    discardThreadSession();
}

core::Result<void> Database::connect()
{
    // One attempt, no retries: at start-up the configured connect timeout is the whole
    // budget, and the agent exits with the error instead of waiting longer.
    discardThreadSession();
    auto session = threadSession();
    if (!session)
        return session.error();
    auto probe = session.value()->exec(QStringLiteral("SELECT 1"), {}, QStringLiteral("connection check"));
    if (!probe)
        return probe.error();
    return {};
}

core::Result<void> Database::ping()
{
    auto session = threadSession();
    if (!session)
        return session.error();
    auto probe = session.value()->exec(QStringLiteral("SELECT 1"), {}, QStringLiteral("ping"));
    if (!probe)
        return probe.error();
    return {};
}

QString Database::beginStatement() const
{
    switch (dialect()) {
    case Dialect::Sqlite: return QStringLiteral("BEGIN IMMEDIATE");
    case Dialect::PostgreSql: return QStringLiteral("BEGIN ISOLATION LEVEL READ COMMITTED");
    case Dialect::MariaDb: return QStringLiteral("START TRANSACTION");
    }
    return {};
}

bool Database::waitForThreadConnectionsClosed(std::chrono::milliseconds timeout)
{
    // The caller's own connections close when it ends, after this returns.
    const int own = t_hasConnections ? 1 : 0;
    std::unique_lock lock(g_teardownMutex);
    return g_teardownDone.wait_for(lock, timeout, [own] { return g_threadsWithConnections <= own; });
}

core::Result<Session *> Database::threadSession()
{
    auto &slot = t_connections.sessions[m_id];
    if (slot && slot->isBroken())
        ThreadConnections::close(slot);
    if (!slot) {
        const QString name = QStringLiteral("payonce-%1-%2")
                                 .arg(m_id)
                                 .arg(reinterpret_cast<quintptr>(QThread::currentThreadId()), 0, 16);
        auto session = std::unique_ptr<Session>(new Session(dialect(), name, clock()));
        auto opened = openConnection(*session);
        if (!opened) {
            ThreadConnections::close(session);
            t_connections.sessions.erase(m_id);
            return opened.error();
        }
        slot = std::move(session);
    }
    return slot.get();
}

void Database::discardThreadSession()
{
    auto it = t_connections.sessions.find(m_id);
    if (it == t_connections.sessions.end())
        return;
    ThreadConnections::close(it->second);
    t_connections.sessions.erase(it);
}

namespace {

/// Creates a SQLite database file that does not exist yet as an empty file of mode 0600,
/// so that every order and payment in it is readable by the agent's user only, whatever
/// the umask. SQLite gives the -wal and -shm files it makes beside it the same mode. An
/// existing file is left as its owner made it.
core::Result<void> createOwnerOnly(const QString &path)
{
    const QByteArray native = QFile::encodeName(path);
    const int fd = ::open(native.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, S_IRUSR | S_IWUSR);
    if (fd >= 0) {
        ::close(fd);
        return {};
    }
    if (errno == EEXIST)
        return {};
    return Error::make(ErrorCode::Misconfigured, QStringLiteral("cannot create the SQLite database %1: %2")
                                                     .arg(path, QString::fromLocal8Bit(std::strerror(errno))));
}

/// The driver's connection settings for url (SQLite: the file, created owner-only).
core::Result<void> configure(QSqlDatabase &db, const config::DatabaseUrl &url, int timeoutSeconds)
{
    switch (url.dialect) {
    case Dialect::Sqlite: {
        const QFileInfo file(url.sqlitePath);
        if (url.sqlitePath != u":memory:" && !QDir().mkpath(file.absolutePath())) {
            return Error::make(
                ErrorCode::Misconfigured,
                QStringLiteral("cannot create the folder %1 for the SQLite database").arg(file.absolutePath()));
        }
        if (url.sqlitePath != u":memory:") {
            if (auto created = createOwnerOnly(url.sqlitePath); !created)
                return created.error();
        }
        db.setDatabaseName(url.sqlitePath);
        // Waits inside SQLite for the single writer instead of failing at once.
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000"));
        break;
    }
    case Dialect::PostgreSql:
        db.setHostName(url.host);
        db.setPort(url.port);
        db.setUserName(url.user);
        db.setPassword(url.password);
        db.setDatabaseName(url.database);
        // libpq's connect_timeout covers the whole start-up, a silent listener included.
        db.setConnectOptions(QStringLiteral("connect_timeout=%1;application_name=payonce-agent").arg(timeoutSeconds));
        break;
    case Dialect::MariaDb:
        db.setHostName(url.host);
        db.setPort(url.port);
        db.setUserName(url.user);
        db.setPassword(url.password);
        db.setDatabaseName(url.database);
        // Read/write timeouts bound a statement whose server vanished; they sit above
        // innodb_lock_wait_timeout (set below) so a lock wait ends as 1205, not as a hang.
        db.setConnectOptions(QStringLiteral("MYSQL_OPT_CONNECT_TIMEOUT=%1;MYSQL_OPT_READ_TIMEOUT=%2;"
                                            "MYSQL_OPT_WRITE_TIMEOUT=%2")
                                 .arg(timeoutSeconds)
                                 .arg(std::max(30, timeoutSeconds)));
        break;
    }
    return {};
}

/// A failed open: Unavailable (the server may come back), unless the settings are wrong.
Error openFailure(const config::DatabaseUrl &url, const QSqlError &error)
{
    const QString where = url.dialect == Dialect::Sqlite ? url.sqlitePath
                                                         : QStringLiteral("%1:%2").arg(url.host).arg(url.port);
    const QString what =
        QStringLiteral("cannot connect to %1 at %2").arg(config::DatabaseUrl::dialectName(url.dialect), where);
    Error mapped = toCoreError(url.dialect, error, what);
    if (mapped.code != ErrorCode::Misconfigured)
        mapped.code = ErrorCode::Unavailable;
    return mapped;
}

/// Each connection's session settings, run once it is open.
QStringList sessionSetup(Dialect dialect)
{
    QStringList setup;
    switch (dialect) {
    case Dialect::Sqlite:
        // synchronous=FULL: in WAL mode NORMAL may lose the last commits on power loss, and
        // a lost `accepted` row that already earned SUCCESS is a payment the platform will
        // never send again (docs/design.md rule 8). Durability before speed.
        // cache_size: each connection's page cache is bounded explicitly (negative = KiB),
        // so the agent's memory is threads × this, whatever SQLite's build default is
        // (docs/design.md, "Memory").
        setup = {QStringLiteral("PRAGMA journal_mode=WAL"), QStringLiteral("PRAGMA synchronous=FULL"),
                 QStringLiteral("PRAGMA foreign_keys=ON"),
                 QStringLiteral("PRAGMA cache_size=-%1").arg(Database::kSqlitePageCacheKiB)};
        break;
    case Dialect::PostgreSql:
        // client_min_messages: libpq prints NOTICEs ("relation … already exists, skipping")
        // straight to stderr, past our logging.
        setup = {QStringLiteral("SET client_min_messages = warning"),
                 QStringLiteral("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED"),
                 QStringLiteral("SET TIME ZONE 'UTC'")};
        break;
    case Dialect::MariaDb:
        // MariaDB defaults to REPEATABLE READ, where SELECT-then-UPDATE races were
        // measured here; payonce runs READ COMMITTED everywhere (docs/design.md, Storage).
        setup = {QStringLiteral("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
                 QStringLiteral("SET SESSION innodb_lock_wait_timeout = %1").arg(Database::kLockWaitTimeoutSeconds),
                 QStringLiteral("SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ENGINE_SUBSTITUTION'"),
                 QStringLiteral("SET time_zone = '+00:00'")};
        break;
    }
    return setup;
}

} // namespace

core::Result<void> Database::openConnection(Session &session)
{
    const auto &url = m_options.url;
    const QString driver = driverFor(url.dialect);
    if (!QSqlDatabase::isDriverAvailable(driver)) {
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("the Qt Sql driver %1 is not installed (Debian package %2)")
                               .arg(driver, packageFor(url.dialect)));
    }
    QSqlDatabase db = QSqlDatabase::addDatabase(driver, session.m_connectionName);
    const int timeoutSeconds = std::max(2, (m_options.connectTimeoutMs + 999) / 1000);
    if (auto configured = configure(db, url, timeoutSeconds); !configured)
        return configured.error();
    session.m_db = db;
    if (!db.open())
        return openFailure(url, db.lastError());
    // A fresh SQLite file's first connections race to switch it to WAL, which needs the file
    // alone: the loser is told busy at once (SQLite does not wait where waiting could
    // deadlock), so a busy set-up statement is tried again, within the connect timeout.
    QElapsedTimer settingUp;
    settingUp.start();
    for (const QString &statement : sessionSetup(url.dialect)) {
        for (int attempt = 0;; ++attempt) {
            auto done = session.exec(statement, {}, QStringLiteral("connection set-up"));
            if (done)
                break;
            if (done.error().code != ErrorCode::Busy || settingUp.elapsed() >= m_options.connectTimeoutMs)
                return done.error();
            backoff(attempt);
        }
    }
    session.m_lockWaitSeconds = session.m_defaultLockWaitSeconds = kLockWaitTimeoutSeconds;
    qCDebug(payonce::lcSql) << "opened connection" << session.m_connectionName;
    return {};
}

core::Result<void> Database::runTransactionOnce(Session &session, const ErasedWork &work)
{
    if (dialect() == Dialect::Sqlite) {
        // BEGIN IMMEDIATE takes the one writer's lock now, before any statement.
        auto begun = session.exec(beginStatement(), {}, QStringLiteral("begin"));
        if (!begun)
            return begun.error();
    } else {
        // Sent with the first statement, which a bounded lock wait rides with
        // (Session::boundLockWaits).
        session.deferBegin(beginStatement());
    }
    session.m_inTransaction = true;
    auto result = work(session);
    if (!result.ok()) {
        session.m_inTransaction = false;
        if (!session.isBroken() && !session.beginStillPending())
            (void)session.exec(QStringLiteral("ROLLBACK"), {}, QStringLiteral("rollback"));
        session.transactionEnded();
        return result;
    }
    if (session.beginStillPending()) {
        // No statement ran: nothing was begun, nothing to commit.
        session.m_inTransaction = false;
        session.transactionEnded();
        return {};
    }
    auto committed = session.exec(QStringLiteral("COMMIT"), {}, QStringLiteral("commit"));
    session.m_inTransaction = false;
    session.transactionEnded();
    if (committed)
        return {};
    Error error = committed.error();
    if (session.isBroken()) {
        // The server may or may not have committed: never guess, never retry blindly.
        error.internalMessage += QStringLiteral(" (the connection broke during COMMIT: outcome unknown)");
        error.code = ErrorCode::Unavailable;
        m_commitOutcomeUnknown = true;
        return error;
    }
    (void)session.exec(QStringLiteral("ROLLBACK"), {}, QStringLiteral("rollback"));
    return error;
}

core::Result<void> Database::runErased(Unit unit, const ErasedWork &work)
{
    // A unit inside another unit on this thread joins it: same connection, no retries of
    // its own (the outer unit owns them), and never a reconnect that would pull the
    // connection out from under the outer unit.
    if (auto it = t_connections.sessions.find(m_id);
        it != t_connections.sessions.end() && it->second && it->second->m_depth > 0) {
        Session &session = *it->second;
        ++session.m_depth;
        auto result = (unit == Unit::Read || session.inTransaction()) ? work(session)
                                                                      : runTransactionOnce(session, work);
        --session.m_depth;
        return result;
    }

    Error lastError = Error::make(ErrorCode::Internal, QStringLiteral("no attempt made"));
    for (int attempt = 1; attempt <= m_options.maxAttempts; ++attempt) {
        if (attempt > 1)
            backoff(attempt);
        auto sessionResult = threadSession();
        if (!sessionResult) {
            lastError = sessionResult.error();
            if (lastError.code == ErrorCode::Unavailable)
                continue; // the server may be coming back (a restart under us)
            return lastError;
        }
        Session &session = *sessionResult.value();
        ++session.m_depth;
        m_commitOutcomeUnknown = false;
        core::Result<void> result;
        if (unit == Unit::Read) {
            result = work(session);
        } else if (m_sqliteWriter) {
            std::lock_guard writer(*m_sqliteWriter);
            result = runTransactionOnce(session, work);
        } else {
            result = runTransactionOnce(session, work);
        }
        --session.m_depth;
        if (result.ok())
            return result;
        lastError = result.error();
        if (m_commitOutcomeUnknown)
            return lastError;
        // Busy: contention, rolled back, nothing written. A broken connection before
        // COMMIT: nothing written either. Both are safe to run again.
        if (session.isBroken() || lastError.code == ErrorCode::Busy) {
            qCDebug(payonce::lcSql) << "retrying a unit of work:" << lastError.internalMessage;
            continue;
        }
        return lastError;
    }
    qCWarning(payonce::lcSql) << "giving up after" << m_options.maxAttempts << "attempts:" << lastError.internalMessage;
    return lastError;
}

} // namespace payonce::sql
