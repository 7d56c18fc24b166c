#include "serverharness.h"

#include "processtools.h"
#include "redisprocess.h"
#include "scratchfolder.h"

#include <QFile>

#include <csignal>

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

using namespace detail;

struct RedisServer::Private {
    RedisServer::Options options;
    std::unique_ptr<ScratchFolder> folder;
    int port = 0;
    qint64 pid = 0;

    QString logFile() const { return folder->filePath(u"redis.log"_s); }
    QString pidFile() const { return folder->filePath(u"redis.pid"_s); }

    RunResult cli(const QStringList &args) const
    {
        QProcessEnvironment env;
        // REDISCLI_AUTH rather than -a: no password in argv, no warning on stderr.
        if (!options.password.isEmpty())
            env.insert(u"REDISCLI_AUTH"_s, options.password);
        return run({u"redis-cli"_s, QStringList{u"-h"_s, u"127.0.0.1"_s, u"-p"_s, QString::number(port)} + args}, env,
                   probeTimeoutMs);
    }

    bool ping() const
    {
        const RunResult result = cli({u"ping"_s});
        return result.ok && result.output.trimmed() == u"PONG";
    }

    bool writeConfig(QString *error) const
    {
        // A config file rather than arguments keeps the password out of `ps`.
        QString config = redisBaseConfig(port, folder->path(), pidFile(), logFile());
        if (!options.password.isEmpty())
            config += u"requirepass %1\n"_s.arg(options.password);
        return writeTextFile(folder->filePath(u"redis.conf"_s), config, error);
    }

    Readiness launch(QString *error)
    {
        if (!writeConfig(error))
            return Readiness::Exited;
        const LogWatch log(logFile());
        pid = startDetached({u"redis-server"_s, {folder->filePath(u"redis.conf"_s)}}, logFile(), error);
        if (pid == 0)
            return Readiness::Exited;
        const Readiness readiness = waitUntilReady([this] { return ping(); }, [this] { return !pidAlive(pid); }, log,
                                                   QDeadlineTimer(startTimeoutMs));
        if (readiness != Readiness::Ready) {
            *error = startError(u"starting redis-server"_s, readinessError(readiness, u"redis-server"_s, port),
                                logFile());
            halt(SIGKILL);
        }
        return readiness;
    }

    bool halt(int signal)
    {
        const bool gone = signalAndWait(pid, signal);
        if (gone) {
            // A SIGKILLed redis leaves its pid file behind; the pid may be reused later.
            QFile::remove(pidFile());
            pid = 0;
        }
        return gone;
    }
};

RedisServer::RedisServer() : d(std::make_unique<Private>())
{
}

RedisServer::~RedisServer()
{
    if (d->folder)
        d->halt(SIGKILL);
}

std::unique_ptr<RedisServer> RedisServer::start(const Options &options, QString *error)
{
    std::unique_ptr<RedisServer> server(new RedisServer);
    server->d->options = options;
    server->d->folder = ScratchFolder::create(u"redis"_s, QString(), error);
    if (!server->d->folder)
        return nullptr;
    const Readiness readiness = retryOnBindFailure([&] {
        server->d->port = freeLoopbackPort();
        return server->d->launch(error);
    });
    if (readiness != Readiness::Ready)
        return nullptr;
    return server;
}

int RedisServer::port() const
{
    return d->port;
}

QString RedisServer::password() const
{
    return d->options.password;
}

QString RedisServer::url() const
{
    const QString auth = d->options.password.isEmpty() ? QString() : u":"_s + d->options.password + u"@"_s;
    return u"redis://"_s + auth + u"127.0.0.1:"_s + QString::number(d->port) + u"/0"_s;
}

QString RedisServer::folder() const
{
    return d->folder->path();
}

bool RedisServer::kill()
{
    return d->halt(SIGKILL);
}

bool RedisServer::startAgain(QString *error)
{
    if (pidAlive(d->pid)) {
        *error = u"redis-server is still running on port %1"_s.arg(d->port);
        return false;
    }
    return d->launch(error) == Readiness::Ready;
}

bool RedisServer::stop()
{
    // With `save ""` SIGTERM is SHUTDOWN NOSAVE: nothing is written.
    return d->halt(SIGTERM);
}

QByteArray RedisServer::cli(const QStringList &args) const
{
    const RunResult result = d->cli(args);
    return result.ok ? result.output.trimmed().toUtf8() : QByteArrayLiteral("(redis-cli failed)");
}

bool RedisServer::moveTo(int newPort, QString *error)
{
    const int oldPort = d->port;
    const RunResult moved = d->cli({u"CONFIG"_s, u"SET"_s, u"port"_s, QString::number(newPort)});
    if (!moved.ok || moved.output.trimmed() != u"OK") {
        *error = u"redis-server on port %1 did not move to %2: %3"_s.arg(oldPort).arg(newPort).arg(moved.output);
        return false;
    }
    d->port = newPort;
    // Connections opened on the old port stay open after CONFIG SET port: close them, as a
    // failover does (redis-cli skips its own connection).
    const RunResult killed = d->cli({u"CLIENT"_s, u"KILL"_s, u"TYPE"_s, u"normal"_s});
    if (!killed.ok) {
        *error = u"CLIENT KILL on port %1 failed: %2"_s.arg(newPort).arg(killed.output);
        return false;
    }
    return true;
}

bool takeOverEndpoint(RedisServer &leaving, RedisServer &arriving, QString *error)
{
    const int endpoint = leaving.port();
    return leaving.moveTo(freeLoopbackPort(), error) && arriving.moveTo(endpoint, error);
}

QString RedisServer::logTail(int lines) const
{
    return tailOfFile(d->logFile(), lines);
}

} // namespace payonce::testsupport
