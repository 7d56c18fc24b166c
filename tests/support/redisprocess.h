#pragma once

// What the Sentinel and Cluster topologies (redissentinel.cpp, rediscluster.cpp) share: one
// redis-server process of theirs, started, stopped and read the same way; and the start of
// every redis-server config, RedisServer's too. Not part of serverharness.h.

#include "processtools.h"
#include "scratchfolder.h"

#include <QDeadlineTimer>
#include <QList>
#include <QString>
#include <QStringView>
#include <QThread>

#include <functional>
#include <memory>

namespace payonce::testsupport::detail {

/// One redis-server process of a topology: a data node, a Sentinel, a cluster node.
struct RedisProcess {
    QString name; ///< "node0", "sentinel1" … (file names and log headings)
    int port = 0;
    qint64 pid = 0;
    QString configFile;
    QString logFile;
    QString pidFile;
    QString dataDir; ///< data nodes: where a replica's sync would put dump.rdb (and a cluster node its nodes.conf)

    QString address() const { return QStringLiteral("127.0.0.1:") + QString::number(port); }
};

/// The lines every redis-server config here starts with (RedisServer's and the
/// topologies'): loopback only on `port`, no persistence, in the foreground, its dir, pid
/// file and log.
QString redisBaseConfig(int port, const QString &dir, const QString &pidFile, const QString &logFile);
/// A data node's replication, quick and off the disk: diskless both ways, so a sync takes
/// milliseconds and leaves no dump.rdb for a restart to load.
inline constexpr char kDisklessReplication[] = "repl-diskless-sync yes\n"
                                               "repl-diskless-sync-delay 0\n"
                                               "repl-diskless-load swapdb\n";

/// Starts `process` (its config already written) as `redis-server <config> extraArguments`
/// and waits until `ping` answers. On failure *error says why (`bindHint` added to a port
/// that could not be bound) and the process is killed.
Readiness launchRedis(RedisProcess &process, const QStringList &extraArguments, const std::function<bool()> &ping,
                      int timeoutMs, const QString &bindHint, QString *error);

/// Sends `signal` and waits until the process is gone; its pid file goes with it (a
/// SIGKILLed redis leaves it, and the pid may be reused later).
bool haltRedis(RedisProcess &process, int signal);

/// "--- name address (log file, last lines) ---" and the last `lines` of each one's log.
QString redisLogTails(const QList<const RedisProcess *> &processes, int lines);

/// What the topologies' Private (RedisSentinelTopology's, RedisClusterTopology's) share:
/// their folder, and over every process they run the answers of redis-cli, PING, the
/// logs for failure messages, and where a process's files go.
struct RedisTopologyState {
    virtual ~RedisTopologyState() = default;

    std::unique_ptr<ScratchFolder> folder;

    /// redis-cli -h 127.0.0.1 -p <port> args…, authenticated as the topology needs.
    virtual RunResult cli(int port, const QStringList &args) const = 0;
    /// Every process of the topology, in the order their logs are shown.
    virtual QList<const RedisProcess *> processes() const = 0;

    /// redis-cli's trimmed answer, or what went wrong (for error messages).
    QString answer(int port, const QStringList &args) const;
    bool ping(const RedisProcess &process) const;
    /// The last `lines` of every process's log, each headed by its name (redisLogTails()).
    QString logTail(int lines) const { return redisLogTails(processes(), lines); }
    /// Every wait's failure message ends with the logs.
    QString withLogs(const QString &message) const { return message + QLatin1Char('\n') + logTail(20); }
    /// Names `process` and puts its config, log and pid file in the folder; with withDataDir
    /// also its own dir, the subfolder <folder>/<name>. False and *error when that could not
    /// be made.
    bool place(RedisProcess &process, const QString &name, bool withDataDir, QString *error) const;
};

/// The line "key:value" of an INFO reply, its value ("" when missing).
QString infoField(const QString &info, QStringView key);

/// Poll done() every 100 ms until it says yes or the deadline passes (done() is asked once
/// more at the end).
template <typename Done>
bool pollUntil(QDeadlineTimer deadline, Done done)
{
    for (;;) {
        if (done())
            return true;
        if (deadline.hasExpired())
            return false;
        QThread::msleep(100);
    }
}

} // namespace payonce::testsupport::detail
