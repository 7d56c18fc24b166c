#pragma once

// What the Sentinel and Cluster topologies (redissentinel.cpp, rediscluster.cpp) share: one
// redis-server process of theirs, started, stopped and read the same way. Not part of
// serverharness.h.

#include "processtools.h"

#include <QDeadlineTimer>
#include <QList>
#include <QString>
#include <QStringView>
#include <QThread>

#include <functional>

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
