#include "processtools.h"

#include "serverharness.h"

#include <QDir>
#include <QFile>
#include <QHostAddress>
#include <QProcess>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <grp.h>
#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

int freeLoopbackPort()
{
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost, 0))
        return 0;
    const int port = server.serverPort();
    server.close();
    return port;
}

bool loopbackPortAcceptsConnections(int port)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, static_cast<quint16>(port));
    const bool connected = socket.waitForConnected(1000);
    socket.abort();
    return connected;
}

} // namespace payonce::testsupport

namespace payonce::testsupport::detail {

bool isRoot()
{
    return ::geteuid() == 0;
}

Command asUser(const QString &user, const QString &program, const QStringList &arguments)
{
    if (!isRoot() || user.isEmpty())
        return {program, arguments};
    return {u"runuser"_s, QStringList{u"-u"_s, user, u"--"_s, program} + arguments};
}

bool chownToUser(const QString &path, const QString &user, QString *error)
{
    if (!isRoot() || user.isEmpty())
        return true;
    const QByteArray name = user.toLocal8Bit();
    const passwd *entry = ::getpwnam(name.constData());
    if (!entry) {
        *error = u"no system user \"%1\" (is the server package installed?)"_s.arg(user);
        return false;
    }
    const QByteArray native = QFile::encodeName(path);
    if (::chown(native.constData(), entry->pw_uid, entry->pw_gid) != 0) {
        *error = u"chown %1 %2: %3"_s.arg(user, path, QString::fromLocal8Bit(::strerror(errno)));
        return false;
    }
    return true;
}

QString RunResult::describe(const Command &command) const
{
    return u"`%1 %2` exited with %3:\n%4"_s.arg(command.program, command.arguments.join(u' '))
        .arg(exitCode)
        .arg(output.trimmed());
}

RunResult run(const Command &command, const QProcessEnvironment &env, int timeoutMs, const QByteArray &stdinData)
{
    QProcess process;
    process.setProgram(command.program);
    process.setArguments(command.arguments);
    process.setProcessChannelMode(QProcess::MergedChannels);
    if (!env.isEmpty()) {
        QProcessEnvironment merged = QProcessEnvironment::systemEnvironment();
        merged.insert(env);
        process.setProcessEnvironment(merged);
    }
    RunResult result;
    process.start();
    if (!process.waitForStarted(timeoutMs)) {
        result.output = process.errorString();
        return result;
    }
    if (!stdinData.isEmpty())
        process.write(stdinData);
    process.closeWriteChannel();
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        result.output = QString::fromLocal8Bit(process.readAll()) + u"\n(killed after %1 ms)"_s.arg(timeoutMs);
        return result;
    }
    result.output = QString::fromLocal8Bit(process.readAll());
    result.exitCode = process.exitCode();
    result.ok = process.exitStatus() == QProcess::NormalExit && result.exitCode == 0;
    return result;
}

qint64 startDetached(const Command &command, const QString &logFile, QString *error)
{
    QProcess process;
    process.setProgram(command.program);
    process.setArguments(command.arguments);
    // Never hand the test's stdout/stderr to a long-lived process: ctest waits for every
    // holder of its pipe, so a server or reaper keeping it open would stall the run.
    process.setStandardInputFile(QProcess::nullDevice());
    process.setStandardOutputFile(logFile, QIODevice::Append);
    process.setStandardErrorFile(logFile, QIODevice::Append);
    qint64 pid = 0;
    if (!process.startDetached(&pid) || pid <= 0) {
        *error = u"could not start %1: %2"_s.arg(command.program, process.errorString());
        return 0;
    }
    return pid;
}

bool pidAlive(qint64 pid)
{
    if (pid <= 0)
        return false;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        return false;
    // A zombie still answers kill(0) (our servers are reparented to an init that may reap
    // late or never); the state letter follows the last ')' in stat.
    QFile stat(u"/proc/%1/stat"_s.arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')');
    if (close < 0 || close + 2 >= line.size())
        return true;
    const char state = line.at(close + 2);
    if (state != 'Z' && state != 'X')
        return true;
    // A zombie leader whose other threads are still exiting still holds its sockets
    // (the fd table goes with the last thread); that last thread leaves task/ on exit.
    return QDir(u"/proc/%1/task"_s.arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size() > 1;
}

qint64 readPidFile(const QString &path, const QString &expectedName)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    bool ok = false;
    const qint64 pid = file.readLine().trimmed().toLongLong(&ok);
    if (!ok || !pidAlive(pid))
        return 0;
    if (!expectedName.isEmpty()) {
        QFile comm(u"/proc/%1/comm"_s.arg(pid));
        if (!comm.open(QIODevice::ReadOnly) || QString::fromLocal8Bit(comm.readAll().trimmed()) != expectedName) {
            return 0;
        }
    }
    return pid;
}

bool signalAndWait(qint64 pid, int signal, int timeoutMs)
{
    if (!pidAlive(pid))
        return true;
    ::kill(static_cast<pid_t>(pid), signal);
    QDeadlineTimer deadline(timeoutMs);
    while (pidAlive(pid)) {
        if (deadline.hasExpired()) {
            if (signal == SIGKILL)
                return false;
            return signalAndWait(pid, SIGKILL, 5000);
        }
        QThread::msleep(20);
    }
    return true;
}

bool writeTextFile(const QString &path, const QString &text, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(text.toLocal8Bit()) < 0) {
        *error = u"could not write %1"_s.arg(path);
        return false;
    }
    return true;
}

QString tailOfFile(const QString &path, int lines)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    constexpr qint64 window = 64 * 1024;
    if (file.size() > window)
        file.seek(file.size() - window);
    QStringList all = QString::fromLocal8Bit(file.readAll()).split(u'\n');
    while (!all.isEmpty() && all.constLast().isEmpty())
        all.removeLast();
    return all.mid(std::max<qsizetype>(0, all.size() - lines)).join(u'\n');
}

QString randomHex(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(raw.data()), static_cast<qsizetype>(bytes) / 4);
    return QString::fromLatin1(raw.toHex());
}

LogWatch::LogWatch(QString path) : m_path(std::move(path)), m_offset(QFile(m_path).size())
{
}

bool LogWatch::containsSinceStart(QStringView needle) const
{
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    file.seek(std::min(m_offset, file.size()));
    return QString::fromLocal8Bit(file.readAll()).contains(needle);
}

Readiness waitUntilReady(const std::function<bool()> &ready, const std::function<bool()> &exited, const LogWatch &log,
                         QDeadlineTimer deadline)
{
    unsigned long pauseMs = 50;
    for (;;) {
        // exited() first: a server that died on a taken port must not be "pinged" through
        // whoever holds that port now (which may accept and never answer).
        if (exited()) {
            return log.containsSinceStart(u"Address already in use") ? Readiness::BindFailed : Readiness::Exited;
        }
        if (ready())
            return Readiness::Ready;
        if (deadline.hasExpired())
            return Readiness::TimedOut;
        QThread::msleep(pauseMs);
        pauseMs = std::min(pauseMs * 2, 250UL);
    }
}

Readiness retryOnBindFailure(const std::function<Readiness()> &attempt)
{
    Readiness readiness = Readiness::Exited;
    for (int attempts = 0; attempts < portAttempts; ++attempts) {
        readiness = attempt();
        if (readiness != Readiness::BindFailed)
            break;
    }
    return readiness;
}

QString startError(const QString &what, const QString &details, const QString &logFile)
{
    return u"%1 failed: %2\n--- %3 (last lines) ---\n%4"_s.arg(what, details, logFile, tailOfFile(logFile, 30));
}

QString readinessError(Readiness readiness, const QString &server, int port)
{
    switch (readiness) {
    case Readiness::Ready: return {};
    case Readiness::BindFailed: return u"%1 could not bind 127.0.0.1:%2 (address in use)"_s.arg(server).arg(port);
    case Readiness::Exited: return u"%1 exited before it answered on 127.0.0.1:%2"_s.arg(server).arg(port);
    case Readiness::TimedOut:
        return u"%1 did not answer on 127.0.0.1:%2 within %3 s"_s.arg(server).arg(port).arg(startTimeoutMs / 1000);
    }
    return {};
}

} // namespace payonce::testsupport::detail
