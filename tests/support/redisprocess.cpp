#include "redisprocess.h"

#include <QFile>
#include <QStringList>

#include <csignal>

using namespace Qt::StringLiterals;

namespace payonce::testsupport::detail {

QString redisBaseConfig(int port, const QString &dir, const QString &pidFile, const QString &logFile)
{
    return u"bind 127.0.0.1\n"
           "port %1\n"
           "save \"\"\n"
           "appendonly no\n"
           "daemonize no\n"
           "dir \"%2\"\n"
           "pidfile \"%3\"\n"
           "logfile \"%4\"\n"_s.arg(QString::number(port), dir, pidFile, logFile);
}

QString RedisTopologyState::answer(int port, const QStringList &args) const
{
    const RunResult result = cli(port, args);
    const QString text = result.output.trimmed();
    return result.ok ? text : u"(redis-cli failed: "_s + text + u')';
}

bool RedisTopologyState::ping(const RedisProcess &process) const
{
    const RunResult result = cli(process.port, {u"ping"_s});
    return result.ok && result.output.trimmed() == u"PONG";
}

bool RedisTopologyState::place(RedisProcess &process, const QString &name, bool withDataDir, QString *error) const
{
    process.name = name;
    process.configFile = folder->filePath(name + u".conf"_s);
    process.logFile = folder->filePath(name + u".log"_s);
    process.pidFile = folder->filePath(name + u".pid"_s);
    if (!withDataDir)
        return true;
    process.dataDir = folder->filePath(name);
    return folder->makeSubfolder(name, error);
}

Readiness launchRedis(RedisProcess &process, const QStringList &extraArguments, const std::function<bool()> &ping,
                      int timeoutMs, const QString &bindHint, QString *error)
{
    const LogWatch log(process.logFile);
    const QStringList arguments = QStringList{process.configFile} + extraArguments;
    process.pid = startDetached({u"redis-server"_s, arguments}, process.logFile, error);
    if (process.pid == 0)
        return Readiness::Exited;
    const qint64 pid = process.pid;
    const Readiness readiness = waitUntilReady(
        ping, [pid] { return !pidAlive(pid); }, log, QDeadlineTimer(timeoutMs));
    if (readiness != Readiness::Ready) {
        QString details = readinessError(readiness, QString(u"redis-server "_s + extraArguments.join(u' ')).trimmed(),
                                         process.port);
        if (readiness == Readiness::BindFailed && !bindHint.isEmpty())
            details += u' ' + bindHint;
        *error = startError(u"starting "_s + process.name, details, process.logFile);
        haltRedis(process, SIGKILL);
    }
    return readiness;
}

bool haltRedis(RedisProcess &process, int signal)
{
    const bool gone = signalAndWait(process.pid, signal);
    if (gone) {
        QFile::remove(process.pidFile);
        process.pid = 0;
    }
    return gone;
}

QString redisLogTails(const QList<const RedisProcess *> &processes, int lines)
{
    QStringList parts;
    for (const RedisProcess *process : processes) {
        parts << u"--- %1 %2 (%3, last lines) ---\n%4"_s.arg(process->name, process->address(), process->logFile,
                                                             tailOfFile(process->logFile, lines));
    }
    return parts.join(u'\n');
}

QString infoField(const QString &info, QStringView key)
{
    const QStringList lines = info.split(u'\n');
    for (const QString &line : lines) {
        const QString trimmed = line.trimmed();
        if (trimmed.startsWith(key) && trimmed.size() > key.size() && trimmed.at(key.size()) == u':')
            return trimmed.mid(key.size() + 1);
    }
    return {};
}

} // namespace payonce::testsupport::detail
