#pragma once

// Internal to payonce_testsupport: the bits the three servers share — running helper
// programs, dropping to a service user when root, watching pids that are not our
// children, and waiting for readiness with a deadline. Not installed, not for tests.

#include <QDeadlineTimer>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <functional>

namespace payonce::testsupport::detail {

/// How long a server may take to become ready before start() gives up.
inline constexpr int startTimeoutMs = 30'000;
/// How long a stop may take before we escalate to SIGKILL.
inline constexpr int stopTimeoutMs = 15'000;
/// How long one readiness probe (redis-cli ping, pg_isready, mariadb-admin ping) may take.
inline constexpr int probeTimeoutMs = 2'000;
/// How many fresh ports start() tries when the chosen one is taken meanwhile.
inline constexpr int portAttempts = 5;

bool isRoot();

/// program + arguments, wrapped in `runuser -u <user> --` when we are root and a user is
/// given; unchanged otherwise (a normal user runs everything as itself).
struct Command {
    QString program;
    QStringList arguments;
};
Command asUser(const QString &user, const QString &program, const QStringList &arguments);

/// chown path to user:user's group when root; a no-op (true) otherwise.
bool chownToUser(const QString &path, const QString &user, QString *error);

struct RunResult {
    bool ok = false; ///< started, finished in time, exit code 0
    int exitCode = -1;
    QString output;                                 ///< stdout and stderr merged
    QString describe(const Command &command) const; ///< for error messages
};
/// Run to completion (killed after timeoutMs). The environment is the system one plus env.
RunResult run(const Command &command, const QProcessEnvironment &env = {}, int timeoutMs = startTimeoutMs,
              const QByteArray &stdinData = {});

/// Start detached (own session, reparented away from us), stdin from /dev/null and
/// stdout/stderr appended to logFile. Returns the pid, or 0 with *error set.
qint64 startDetached(const Command &command, const QString &logFile, QString *error);

/// Still running: not gone, and not a zombie whose threads have all finished exiting (our
/// servers are reparented to an init that may reap late or never).
bool pidAlive(qint64 pid);
/// First line of a pid file as a pid, or 0 — also 0 when that pid is not alive or, with
/// expectedName, is not a process of that name (a stale file's pid may be someone else's).
qint64 readPidFile(const QString &path, const QString &expectedName = {});
/// Send signal and wait up to timeoutMs for the process to go; SIGKILL after that.
/// True once the process is gone.
bool signalAndWait(qint64 pid, int signal, int timeoutMs = stopTimeoutMs);

/// Writes text (local 8-bit) to path, replacing what was there; false with *error set
/// ("could not write <path>") otherwise.
bool writeTextFile(const QString &path, const QString &text, QString *error);

/// The last lines of a text file (empty string when unreadable).
QString tailOfFile(const QString &path, int lines);

/// Generated passwords: hex, so they are safe in URLs, SQL literals and argv.
QString randomHex(int bytes = 16);

/// A log file watched from a given offset, so a restart does not see the previous run.
class LogWatch {
public:
    explicit LogWatch(QString path);
    bool containsSinceStart(QStringView needle) const;
    QString path() const { return m_path; }

private:
    QString m_path;
    qint64 m_offset = 0;
};

enum class Readiness {
    Ready,
    BindFailed,
    Exited,
    TimedOut
};
/// Poll ready() every 50–250 ms until it says yes, exited() says the server is gone (then
/// the log decides between BindFailed and Exited), or the deadline passes.
Readiness waitUntilReady(const std::function<bool()> &ready, const std::function<bool()> &exited, const LogWatch &log,
                         QDeadlineTimer deadline);

/// A first start: attempt() — which picks fresh free ports and launches on them — again
/// while the port turned out to be taken meanwhile (BindFailed), portAttempts times at the
/// most. The last attempt's readiness.
Readiness retryOnBindFailure(const std::function<Readiness()> &attempt);

/// "<what> failed: <details>\n--- <log> (last lines) ---\n<tail>"
QString startError(const QString &what, const QString &details, const QString &logFile);
QString readinessError(Readiness readiness, const QString &server, int port);

} // namespace payonce::testsupport::detail
