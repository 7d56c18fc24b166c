#include "serverharness.h"

#include "databaseserver.h"

#include <QFile>
#include <QFileInfo>

#include <csignal>

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

using namespace detail;

struct PostgresServer::Private : DatabaseServerState {
    // SIGINT: fast shutdown (data kept). SIGQUIT: immediate, for the destructor.
    Private() : DatabaseServerState({u"postgresql"_s, u"PostgreSQL"_s, u"pg"_s, u"postgres"_s, SIGINT, SIGQUIT}) {}

    QString bin;

    QString dataDir() const { return folder->filePath(u"data"_s); }
    QString logFile() const override { return folder->filePath(u"postgresql.log"_s); }
    qint64 serverPid() const override { return readPidFile(dataDir() + u"/postmaster.pid"_s, u"postgres"_s); }
    QString tool(const QString &name) const { return bin + u'/' + name; }

    RunResult psql(const QString &database, const QString &sql) const
    {
        QProcessEnvironment env;
        env.insert(u"PGPASSWORD"_s, password);
        env.insert(u"PGCONNECT_TIMEOUT"_s, u"5"_s);
        return run({tool(u"psql"_s),
                    {u"-X"_s, u"-q"_s, u"-v"_s, u"ON_ERROR_STOP=1"_s, u"-h"_s, u"127.0.0.1"_s, u"-p"_s,
                     QString::number(port), u"-U"_s, databaseUser, u"-d"_s, database, u"-c"_s, sql}},
                   env);
    }

    bool initdb(QString *error) const
    {
        // initdb reads the superuser's password from a file; it is gone right after.
        const QString pwfile = folder->filePath(u"pwfile"_s);
        {
            QFile file(pwfile);
            if (!file.open(QIODevice::WriteOnly) || file.write(password.toLatin1()) < 0
                || !file.setPermissions(QFile::ReadOwner | QFile::WriteOwner)) {
                *error = u"could not write %1"_s.arg(pwfile);
                return false;
            }
        }
        if (!chownToUser(pwfile, kind.serviceUser, error))
            return false;
        const Command command = asUser(kind.serviceUser, tool(u"initdb"_s),
                                       {u"-D"_s, dataDir(), u"-U"_s, databaseUser, u"--pwfile="_s + pwfile, u"-A"_s,
                                        u"scram-sha-256"_s, u"-E"_s, u"UTF8"_s, u"--locale=C.UTF-8"_s,
                                        // No fsync of the fresh cluster: it lives for one test.
                                        u"--no-sync"_s, u"--no-instructions"_s});
        const RunResult result = run(command, {}, 2 * startTimeoutMs);
        QFile::remove(pwfile);
        if (!result.ok) {
            *error = u"initdb failed: "_s + result.describe(command);
            return false;
        }
        // Appended to postgresql.conf, so these hold for every start of this cluster. The
        // port is not among them: pg_ctl passes it, so a retry on another port is simple.
        //
        // fsync=off only matters when the machine crashes, and the cluster is thrown away
        // after the test anyway. synchronous_commit stays on, because a server killed
        // after COMMIT returned must still have the row when it comes back — tests of
        // crash recovery rely on exactly that.
        const QString settings = u"\n# payonce test harness\n"
                                 "listen_addresses = '127.0.0.1'\n"
                                 "unix_socket_directories = '%1'\n"
                                 "fsync = off\n"_s.arg(folder->path());
        QFile config(dataDir() + u"/postgresql.conf"_s);
        if (!config.open(QIODevice::Append) || config.write(settings.toLocal8Bit()) < 0) {
            *error = u"could not append to %1"_s.arg(config.fileName());
            return false;
        }
        return true;
    }

    Readiness launch(QString *error) override
    {
        const LogWatch log(logFile());
        // pg_ctl -w returns once the postmaster says "ready" in postmaster.pid, or fails
        // when it exits; pg_isready below then checks the TCP port itself.
        const Command command = asUser(kind.serviceUser, tool(u"pg_ctl"_s),
                                       {u"-D"_s, dataDir(), u"-l"_s, logFile(), u"-w"_s, u"-t"_s,
                                        QString::number(startTimeoutMs / 1000), u"-o"_s,
                                        u"-p "_s + QString::number(port), u"start"_s});
        const RunResult started = run(command, {}, startTimeoutMs + 5000);
        Readiness readiness = Readiness::Ready;
        QString details;
        if (!started.ok) {
            readiness = log.containsSinceStart(u"Address already in use") ? Readiness::BindFailed : Readiness::Exited;
            details = started.describe(command);
        } else {
            const qint64 pid = serverPid();
            const Command isReady{tool(u"pg_isready"_s),
                                  {u"-q"_s, u"-t"_s, u"1"_s, u"-h"_s, u"127.0.0.1"_s, u"-p"_s, QString::number(port),
                                   u"-d"_s, u"postgres"_s}};
            readiness = waitUntilReady([&] { return run(isReady, {}, probeTimeoutMs).ok; },
                                       [&] { return !pidAlive(pid); }, log, QDeadlineTimer(startTimeoutMs));
            details = readinessError(readiness, u"postgres"_s, port);
        }
        if (readiness != Readiness::Ready) {
            *error = startError(u"starting PostgreSQL"_s, details, logFile());
            halt(SIGQUIT);
        }
        return readiness;
    }

    bool halt(int signal) override { return signalAndWait(serverPid(), signal); }
};

PostgresServer::PostgresServer() : DatabaseServer(std::make_unique<Private>()), d(static_cast<Private *>(m_state.get()))
{
}

PostgresServer::~PostgresServer() = default;

QString PostgresServer::binDir()
{
    const QString fromEnvironment = qEnvironmentVariable("PAYONCE_PG_BINDIR");
    return fromEnvironment.isEmpty() ? u"/usr/lib/postgresql/15/bin"_s : fromEnvironment;
}

std::unique_ptr<PostgresServer> PostgresServer::start(QString *error)
{
    std::unique_ptr<PostgresServer> server(new PostgresServer);
    Private &d = *server->d;
    d.bin = binDir();
    if (!QFileInfo(d.tool(u"initdb"_s)).isExecutable()) {
        *error = u"no PostgreSQL at %1 (set PAYONCE_PG_BINDIR)"_s.arg(d.bin);
        return nullptr;
    }
    if (!d.prepare(error) || !d.initdb(error) || !d.launchOnFreePort(error))
        return nullptr;
    const RunResult created = d.psql(u"postgres"_s, u"CREATE DATABASE "_s + databaseName);
    if (!created.ok) {
        *error = startError(u"creating the database"_s, created.output, d.logFile());
        return nullptr;
    }
    return server;
}

} // namespace payonce::testsupport
