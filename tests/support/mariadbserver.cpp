#include "serverharness.h"

#include "databaseserver.h"

#include <QFile>

#include <csignal>

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

using namespace detail;

struct MariaDbServer::Private : DatabaseServerState {
    // SIGTERM: graceful shutdown. SIGKILL for the destructor: the data is deleted right after.
    Private() : DatabaseServerState({u"mariadb"_s, u"mariadbd"_s, u"mariadb"_s, u"mysql"_s, SIGTERM, SIGKILL}) {}

    qint64 pid = 0;

    QString dataDir() const { return folder->filePath(u"data"_s); }
    QString socketPath() const { return folder->filePath(u"mariadbd.sock"_s); }
    QString pidFile() const { return folder->filePath(u"mariadbd.pid"_s); }
    QString logFile() const override { return folder->filePath(u"mariadbd.err"_s); }
    qint64 serverPid() const override { return pid; }
    /// Its own tmpdir: with the shared /tmp, concurrent bootstraps (other tests, other
    /// worktrees) were seen to fail on "#sql-temptable-*" files vanishing under them.
    QString tmpDir() const { return folder->filePath(u"tmp"_s); }

    /// --user only as root: mariadbd refuses to run as root, and a normal user cannot
    /// switch to mysql anyway.
    QStringList userArgument() const { return isRoot() ? QStringList{u"--user="_s + kind.serviceUser} : QStringList{}; }

    bool installDb(QString *error) const
    {
        if (!folder->makeSubfolder(u"tmp"_s, error))
            return false;
        // Options it does not know itself (--tmpdir) go on to the bootstrap mariadbd.
        const Command command{u"mariadb-install-db"_s,
                              QStringList{u"--no-defaults"_s, u"--datadir="_s + dataDir()} + userArgument()
                                  + QStringList{u"--auth-root-authentication-method=normal"_s, u"--skip-test-db"_s,
                                                u"--skip-name-resolve"_s, u"--tmpdir="_s + tmpDir()}};
        const RunResult result = run(command, {}, 2 * startTimeoutMs);
        if (!result.ok) {
            *error = u"mariadb-install-db failed: "_s + result.describe(command);
            return false;
        }
        return true;
    }

    bool ping() const
    {
        // mariadb-admin ping exits 0 whenever the server answers, even with "access
        // denied" — exactly "is it up on that TCP port".
        return run({u"mariadb-admin"_s,
                    {u"--no-defaults"_s, u"--protocol=TCP"_s, u"-h"_s, u"127.0.0.1"_s, u"-P"_s, QString::number(port),
                     u"-u"_s, u"root"_s, u"--connect-timeout=1"_s, u"ping"_s}},
                   {}, probeTimeoutMs)
            .ok;
    }

    Readiness launch(QString *error) override
    {
        // mariadbd reopens its stderr onto --log-error as the mysql user: the file must be
        // that user's before we hand it over as stdout/stderr for the earliest messages.
        {
            QFile log(logFile());
            if (!log.open(QIODevice::Append)) {
                *error = u"could not create %1"_s.arg(logFile());
                return Readiness::Exited;
            }
        }
        if (!chownToUser(logFile(), kind.serviceUser, error))
            return Readiness::Exited;
        const LogWatch log(logFile());
        const Command command{
            u"/usr/sbin/mariadbd"_s,
            QStringList{u"--no-defaults"_s, u"--datadir="_s + dataDir()} + userArgument()
                + QStringList{u"--port="_s + QString::number(port), u"--bind-address=127.0.0.1"_s,
                              u"--socket="_s + socketPath(), u"--pid-file="_s + pidFile(),
                              u"--log-error="_s + logFile(), u"--tmpdir="_s + tmpDir(), u"--skip-name-resolve"_s,
                              // Debian's packaged server defaults, which --no-defaults would drop.
                              u"--character-set-server=utf8mb4"_s, u"--collation-server=utf8mb4_general_ci"_s,
                              // Commits reach the OS at COMMIT, so a killed mariadbd keeps them; only
                              // a machine crash could lose them, which a throwaway server ignores.
                              u"--innodb-flush-log-at-trx-commit=2"_s, u"--skip-log-bin"_s}};
        pid = startDetached(command, logFile(), error);
        if (pid == 0)
            return Readiness::Exited;
        const Readiness readiness = waitUntilReady([this] { return ping(); }, [this] { return !pidAlive(pid); }, log,
                                                   QDeadlineTimer(startTimeoutMs));
        if (readiness != Readiness::Ready) {
            *error = startError(u"starting mariadbd"_s, readinessError(readiness, u"mariadbd"_s, port), logFile());
            halt(SIGKILL);
        }
        return readiness;
    }

    bool createUser(QString *error) const
    {
        // As root over the socket (root@localhost has no password, normal authentication).
        QString sql = u"CREATE DATABASE %1;\n"_s.arg(databaseName);
        for (const QString &host : {u"127.0.0.1"_s, u"localhost"_s}) {
            sql += u"CREATE USER '%1'@'%2' IDENTIFIED BY '%3';\n"
                   "GRANT ALL ON %4.* TO '%1'@'%2';\n"_s.arg(databaseUser, host, password, databaseName);
        }
        const Command command{u"mariadb"_s,
                              {u"--no-defaults"_s, u"--protocol=SOCKET"_s, u"--socket="_s + socketPath(), u"-u"_s,
                               u"root"_s, u"--batch"_s}};
        const RunResult result = run(command, {}, startTimeoutMs, sql.toUtf8());
        if (!result.ok) {
            *error = startError(u"creating the payonce user"_s, result.describe(command), logFile());
            return false;
        }
        return true;
    }

    bool halt(int signal) override
    {
        const bool gone = signalAndWait(pid, signal, 2 * stopTimeoutMs);
        if (gone) {
            // A killed mariadbd leaves its pid file; the pid may be reused later.
            QFile::remove(pidFile());
            pid = 0;
        }
        return gone;
    }
};

MariaDbServer::MariaDbServer() : DatabaseServer(std::make_unique<Private>()), d(static_cast<Private *>(m_state.get()))
{
}

MariaDbServer::~MariaDbServer() = default;

std::unique_ptr<MariaDbServer> MariaDbServer::start(QString *error)
{
    std::unique_ptr<MariaDbServer> server(new MariaDbServer);
    Private &d = *server->d;
    if (!d.prepare(error) || !d.installDb(error) || !d.launchOnFreePort(error) || !d.createUser(error))
        return nullptr;
    return server;
}

} // namespace payonce::testsupport
