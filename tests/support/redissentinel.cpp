#include "serverharness.h"

#include "processtools.h"
#include "redisprocess.h"
#include "scratchfolder.h"

#include <QFile>
#include <QHash>
#include <QThread>

#include <algorithm>
#include <csignal>

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

using namespace detail;

namespace {

/// One redis-server process of the topology: a data node or a Sentinel.
struct Instance : RedisProcess {
    bool sentinel = false;
};

/// A reply of SENTINEL replicas / SENTINEL sentinels as redis-cli prints it without a tty:
/// one line per element, so each instance is a run of key and value lines starting at "name".
QList<QHash<QString, QString>> parseInstances(const QString &output)
{
    QList<QHash<QString, QString>> instances;
    const QStringList lines = output.split(u'\n');
    for (qsizetype i = 0; i + 1 < lines.size(); i += 2) {
        const QString key = lines.at(i).trimmed();
        if (key == u"name")
            instances.append(QHash<QString, QString>());
        if (!instances.isEmpty())
            instances.last().insert(key, lines.at(i + 1).trimmed());
    }
    return instances;
}

/// What a Sentinel's view of an instance says, compactly (for error messages).
QString describeInstance(const QHash<QString, QString> &instance)
{
    QString text = instance.value(u"ip"_s) + u':' + instance.value(u"port"_s) + u" flags="_s
                   + instance.value(u"flags"_s);
    if (instance.contains(u"role-reported"_s)) {
        text += u" role-reported="_s + instance.value(u"role-reported"_s) + u" master-link-status="_s
                + instance.value(u"master-link-status"_s);
    }
    return text;
}

/// A config file argument in double quotes (Redis's config parser reads \\ and \" in them),
/// so a password with spaces or quotes stays one argument.
QString quoted(const QString &value)
{
    QString escaped = value;
    escaped.replace(u'\\', u"\\\\"_s).replace(u'"', u"\\\""_s);
    return u'"' + escaped + u'"';
}

} // namespace

struct RedisSentinelTopology::Private : RedisTopologyState {
    RedisSentinelTopology::Options options;
    QList<Instance> nodes;     ///< [0] the first master, [1] the first replica
    QList<Instance> sentinels; ///< three
    int killed = -1;           ///< index in nodes of the node killMaster() killed, -1 if none

    /// The password the instance on `port` asks for: the Sentinels' on a Sentinel's port,
    /// the data nodes' on a node's, none on any other.
    QString passwordFor(int port) const
    {
        for (const Instance &sentinel : sentinels) {
            if (sentinel.port == port)
                return options.sentinelPassword;
        }
        for (const Instance &node : nodes) {
            if (node.port == port)
                return options.password;
        }
        return {};
    }

    RunResult cli(int port, const QStringList &args) const override
    {
        QProcessEnvironment env;
        // REDISCLI_AUTH rather than -a: no password in argv, no warning on stderr.
        if (const QString password = passwordFor(port); !password.isEmpty())
            env.insert(u"REDISCLI_AUTH"_s, password);
        return run({u"redis-cli"_s, QStringList{u"-h"_s, u"127.0.0.1"_s, u"-p"_s, QString::number(port)} + args}, env,
                   probeTimeoutMs);
    }

    QList<const RedisProcess *> processes() const override
    {
        QList<const RedisProcess *> all;
        for (const QList<Instance> *group : {&nodes, &sentinels}) {
            for (const Instance &instance : *group)
                all << &instance;
        }
        return all;
    }

    /// The master's port by this Sentinel's get-master-addr-by-name, -1 if it does not answer
    /// with one; *said gets its answer.
    int sentinelsMaster(const Instance &sentinel, QString *said = nullptr) const
    {
        const RunResult result = cli(sentinel.port, {u"SENTINEL"_s, u"get-master-addr-by-name"_s, options.masterName});
        const QStringList lines = result.output.trimmed().split(u'\n');
        bool ok = false;
        const int port = lines.size() == 2 ? lines.at(1).trimmed().toInt(&ok) : 0;
        if (said) {
            if (!result.ok)
                *said = u"(redis-cli failed: "_s + result.output.trimmed() + u')';
            else if (ok)
                *said = lines.at(0).trimmed() + u':' + QString::number(port);
            else
                *said = u"\""_s + result.output.trimmed() + u'"';
        }
        return result.ok && ok && port > 0 ? port : -1;
    }

    QList<QHash<QString, QString>> sentinelsView(const Instance &sentinel, const QString &what) const
    {
        const RunResult result = cli(sentinel.port, {u"SENTINEL"_s, what, options.masterName});
        return result.ok ? parseInstances(result.output) : QList<QHash<QString, QString>>{};
    }

    /// This Sentinel lists the node on `port` as a replica that is up (flags "slave": not
    /// down, not disconnected) — what its SENTINEL FAILOVER needs to pick it — and, with
    /// `synced`, its last INFO of the node also said role slave with the link up. (That last
    /// INFO may be 10 s old: Sentinel asks a healthy replica every 10 s.) *said: its view.
    bool sentinelSeesReplica(const Instance &sentinel, int port, bool synced, QString *said) const
    {
        const auto replicas = sentinelsView(sentinel, u"replicas"_s);
        QStringList seen;
        for (const auto &replica : replicas) {
            seen << describeInstance(replica);
            if (replica.value(u"port"_s).toInt() == port) {
                *said = describeInstance(replica);
                return replica.value(u"flags"_s) == u"slave"
                       && (!synced
                           || (replica.value(u"role-reported"_s) == u"slave"
                               && replica.value(u"master-link-status"_s) == u"ok"));
            }
        }
        *said = seen.isEmpty() ? u"no replicas"_s : u"replicas "_s + seen.join(u", "_s);
        return false;
    }

    /// This Sentinel sees the two others, both linked and not down. *said: its view.
    bool sentinelSeesOthers(const Instance &sentinel, QString *said) const
    {
        const auto others = sentinelsView(sentinel, u"sentinels"_s);
        QStringList seen;
        int good = 0;
        for (const auto &other : others) {
            seen << describeInstance(other);
            if (other.value(u"flags"_s) == u"sentinel")
                ++good;
        }
        *said = u"%1 other sentinels (%2)"_s.arg(others.size()).arg(seen.join(u", "_s));
        return good == sentinels.size() - 1;
    }

    /// A data node's config: a master, or a replica of replicaOf (> 0). No persistence; the
    /// replication settings only keep a sync quick and off the disk (a replica's full sync
    /// would otherwise leave a dump.rdb that a restart loads). With a password: requirepass,
    /// and masterauth on every node, since any of them may become a replica (a restarted
    /// node is converted by the Sentinels and syncs from the new master).
    bool writeNodeConfig(const Instance &node, int replicaOf, QString *error) const
    {
        QString config = redisBaseConfig(node.port, node.dataDir, node.pidFile, node.logFile)
                         + QLatin1String(kDisklessReplication);
        if (!options.password.isEmpty()) {
            config += u"requirepass %1\n"
                      "masterauth %1\n"_s.arg(quoted(options.password));
        }
        if (replicaOf > 0)
            config += u"replicaof 127.0.0.1 %1\n"_s.arg(replicaOf);
        return writeTextFile(node.configFile, config, error);
    }

    /// A Sentinel's config; Sentinel rewrites it (its id, the replicas and Sentinels it
    /// learns, epochs), so each has its own. With passwords: auth-pass for the data nodes,
    /// requirepass for itself and sentinel-pass for the other Sentinels.
    bool writeSentinelConfig(const Instance &sentinel, int masterPort, QString *error) const
    {
        const QString &name = options.masterName;
        QString config = u"bind 127.0.0.1\n"
                         "port %1\n"
                         "daemonize no\n"
                         "dir \"%2\"\n"
                         "pidfile \"%3\"\n"
                         "logfile \"%4\"\n"
                         "sentinel resolve-hostnames no\n"
                         "sentinel announce-hostnames no\n"
                         "sentinel monitor %5 127.0.0.1 %6 2\n"
                         "sentinel down-after-milliseconds %5 %7\n"
                         "sentinel failover-timeout %5 %8\n"
                         "sentinel parallel-syncs %5 1\n"_s.arg(
                             QString::number(sentinel.port), folder->path(), sentinel.pidFile, sentinel.logFile, name,
                             QString::number(masterPort), QString::number(options.downAfterMs),
                             QString::number(options.failoverTimeoutMs));
        if (!options.password.isEmpty())
            config += u"sentinel auth-pass %1 %2\n"_s.arg(name, quoted(options.password));
        if (!options.sentinelPassword.isEmpty()) {
            config += u"requirepass %1\n"
                      "sentinel sentinel-pass %1\n"_s.arg(quoted(options.sentinelPassword));
        }
        return writeTextFile(sentinel.configFile, config, error);
    }

    /// Start the instance (its config already written) and wait until it answers PING.
    Readiness launch(Instance &instance, QString *error)
    {
        return launchRedis(
            instance, instance.sentinel ? QStringList{u"--sentinel"_s} : QStringList{},
            [this, &instance] { return ping(instance); }, startTimeoutMs, QString(), error);
    }

    /// First start: a fresh free port per attempt, the config written for it.
    bool launchOnFreePort(Instance &instance, int masterPort, QString *error)
    {
        return retryOnBindFailure([&] {
                   instance.port = freeLoopbackPort();
                   if (instance.port <= 0) {
                       *error = u"no free loopback port for %1"_s.arg(instance.name);
                       return Readiness::Exited;
                   }
                   const bool written = instance.sentinel ? writeSentinelConfig(instance, masterPort, error)
                                                          : writeNodeConfig(instance, masterPort, error);
                   if (!written)
                       return Readiness::Exited;
                   return launch(instance, error);
               })
               == Readiness::Ready;
    }

    bool halt(Instance &instance, int signal) { return haltRedis(instance, signal); }

    /// After start: the replica in sync, and every Sentinel naming the master, listing the
    /// replica as a synced replica and seeing the two other Sentinels.
    bool waitUntilSettled(QString *error) const
    {
        const int masterPort = nodes.at(0).port;
        const int replicaPort = nodes.at(1).port;
        QStringList seen;
        const bool settled = pollUntil(QDeadlineTimer(startTimeoutMs), [&] {
            seen.clear();
            bool all = true;
            for (const Instance &sentinel : sentinels) {
                QString master;
                QString replica;
                QString others;
                const bool good = sentinelsMaster(sentinel, &master) == masterPort
                                  && sentinelSeesReplica(sentinel, replicaPort, true, &replica)
                                  && sentinelSeesOthers(sentinel, &others);
                all = all && good;
                seen << u"%1 %2: master %3; %4; %5"_s.arg(sentinel.name, sentinel.address(), master,
                                                          replica.isEmpty() ? u"-"_s : replica,
                                                          others.isEmpty() ? u"-"_s : others);
            }
            return all;
        });
        if (!settled) {
            *error = withLogs(u"the Sentinels did not settle within %1 s (each must name the master "
                              "127.0.0.1:%2, list 127.0.0.1:%3 as a synced replica and see two "
                              "other Sentinels):\n%4"_s.arg(startTimeoutMs / 1000)
                                  .arg(masterPort)
                                  .arg(replicaPort)
                                  .arg(seen.join(u'\n')));
        }
        return settled;
    }

    /// The node on `port` is a replica with its link up. *said: its role and link status.
    bool nodeIsSyncedReplica(int port, QString *said) const
    {
        const RunResult info = cli(port, {u"INFO"_s, u"replication"_s});
        if (!info.ok) {
            *said = u"(redis-cli failed: "_s + info.output.trimmed() + u')';
            return false;
        }
        const QString role = infoField(info.output, u"role");
        const QString link = infoField(info.output, u"master_link_status");
        *said = u"role:%1 master_port:%2 master_link_status:%3"_s.arg(role, infoField(info.output, u"master_port"),
                                                                      link.isEmpty() ? u"-"_s : link);
        return role == u"slave" && link == u"up";
    }
};

RedisSentinelTopology::RedisSentinelTopology() : d(std::make_unique<Private>())
{
}

RedisSentinelTopology::~RedisSentinelTopology()
{
    if (!d->folder)
        return;
    // The Sentinels first, so that none of them reacts to the nodes going away.
    for (Instance &sentinel : d->sentinels)
        d->halt(sentinel, SIGKILL);
    for (Instance &node : d->nodes)
        d->halt(node, SIGKILL);
}

std::unique_ptr<RedisSentinelTopology> RedisSentinelTopology::start(const Options &options, QString *error)
{
    std::unique_ptr<RedisSentinelTopology> topology(new RedisSentinelTopology);
    Private &d = *topology->d;
    d.options = options;
    d.folder = ScratchFolder::create(u"redis-sentinel"_s, QString(), error);
    if (!d.folder)
        return nullptr;
    for (int i = 0; i < 2; ++i) {
        Instance node;
        if (!d.place(node, u"node%1"_s.arg(i), true, error))
            return nullptr;
        d.nodes.append(node);
    }
    for (int i = 0; i < 3; ++i) {
        Instance sentinel;
        sentinel.sentinel = true;
        d.place(sentinel, u"sentinel%1"_s.arg(i), false, error);
        d.sentinels.append(sentinel);
    }

    if (!d.launchOnFreePort(d.nodes[0], 0, error) || !d.launchOnFreePort(d.nodes[1], d.nodes[0].port, error))
        return nullptr;
    // The replica in sync before the Sentinels start: their first INFO of the master then
    // lists it, rather than the next one 10 s later.
    QString replicaSaid;
    if (!pollUntil(QDeadlineTimer(startTimeoutMs),
                   [&] { return d.nodeIsSyncedReplica(d.nodes[1].port, &replicaSaid); })) {
        *error = d.withLogs(u"%1 (127.0.0.1:%2) did not sync from the master 127.0.0.1:%3 within "
                            "%4 s: %5"_s.arg(d.nodes[1].name)
                                .arg(d.nodes[1].port)
                                .arg(d.nodes[0].port)
                                .arg(startTimeoutMs / 1000)
                                .arg(replicaSaid));
        return nullptr;
    }
    for (Instance &sentinel : d.sentinels) {
        if (!d.launchOnFreePort(sentinel, d.nodes[0].port, error))
            return nullptr;
    }
    if (!d.waitUntilSettled(error))
        return nullptr;
    return topology;
}

QString RedisSentinelTopology::masterName() const
{
    return d->options.masterName;
}

QStringList RedisSentinelTopology::sentinels() const
{
    QStringList addresses;
    for (const Instance &sentinel : d->sentinels)
        addresses << sentinel.address();
    return addresses;
}

QList<int> RedisSentinelTopology::dataPorts() const
{
    QList<int> ports;
    for (const Instance &node : d->nodes)
        ports << node.port;
    return ports;
}

int RedisSentinelTopology::masterPort() const
{
    for (const Instance &sentinel : d->sentinels) {
        const int port = d->sentinelsMaster(sentinel);
        if (port > 0)
            return port;
    }
    return -1;
}

int RedisSentinelTopology::killMaster(QString *error)
{
    const int port = masterPort();
    if (port < 0) {
        *error = d->withLogs(u"no Sentinel answers SENTINEL get-master-addr-by-name %1"_s.arg(d->options.masterName));
        return -1;
    }
    for (qsizetype i = 0; i < d->nodes.size(); ++i) {
        Instance &node = d->nodes[i];
        if (node.port != port)
            continue;
        if (!pidAlive(node.pid)) {
            *error = u"the Sentinels name %1 (127.0.0.1:%2) master, but it is not running"_s.arg(node.name).arg(port);
            return -1;
        }
        if (!d->halt(node, SIGKILL)) {
            *error = u"%1 (127.0.0.1:%2, pid %3) did not go after SIGKILL"_s.arg(node.name).arg(port).arg(node.pid);
            return -1;
        }
        d->killed = static_cast<int>(i);
        return port;
    }
    *error = u"the Sentinels name 127.0.0.1:%1 master, which is none of the data nodes (%2, %3)"_s.arg(port)
                 .arg(d->nodes.at(0).port)
                 .arg(d->nodes.at(1).port);
    return -1;
}

int RedisSentinelTopology::waitForFailover(int oldPort, int timeoutMs, QString *error)
{
    QStringList seen;
    int newPort = -1;
    const bool done = pollUntil(QDeadlineTimer(timeoutMs), [&] {
        seen.clear();
        int agreed = 0;
        bool all = true;
        for (const Instance &sentinel : d->sentinels) {
            QString said;
            const int port = d->sentinelsMaster(sentinel, &said);
            seen << u"%1 %2 names %3"_s.arg(sentinel.name, sentinel.address(), said);
            if (port <= 0 || port == oldPort || (agreed != 0 && port != agreed))
                all = false;
            else
                agreed = port;
        }
        if (!all)
            return false;
        const QString role = d->answer(agreed, {u"ROLE"_s});
        seen << u"127.0.0.1:%1 answers ROLE: %2"_s.arg(agreed).arg(role.section(u'\n', 0, 0));
        if (role.section(u'\n', 0, 0) != u"master")
            return false;
        newPort = agreed;
        return true;
    });
    if (!done) {
        *error = d->withLogs(
            u"no failover from 127.0.0.1:%1 within %2 ms:\n%3"_s.arg(oldPort).arg(timeoutMs).arg(seen.join(u'\n')));
        return -1;
    }
    return newPort;
}

bool RedisSentinelTopology::restartKilled(int timeoutMs, QString *error)
{
    const QDeadlineTimer deadline(timeoutMs);
    if (d->killed < 0) {
        *error = u"no data node to restart: killMaster() was not called (or its node was restarted already)"_s;
        return false;
    }
    Instance &node = d->nodes[d->killed];
    if (pidAlive(node.pid)) {
        *error = u"%1 (127.0.0.1:%2) is still running"_s.arg(node.name).arg(node.port);
        return false;
    }
    // An empty master that a Sentinel still takes for the master would be copied onto the
    // replica: only after the failover.
    for (const Instance &sentinel : d->sentinels) {
        QString said;
        if (d->sentinelsMaster(sentinel, &said) == node.port) {
            *error = u"%1 %2 still names the killed %3 (127.0.0.1:%4) master; restarting it empty "
                     "now would empty the replica too (waitForFailover first)"_s
                         .arg(sentinel.name, sentinel.address(), node.name)
                         .arg(node.port);
            return false;
        }
    }
    // "Empty": nothing a sync may have left in its dir gets loaded.
    QFile::remove(node.dataDir + u"/dump.rdb"_s);
    if (!d->writeNodeConfig(node, 0, error))
        return false;
    if (d->launch(node, error) != Readiness::Ready)
        return false;
    d->killed = -1;

    // The Sentinels convert it once it has reported role master for 8 s (Sentinel's
    // publish period × 4), at their next INFO (every 10 s); the sync follows at once. Then
    // wait until every Sentinel's own INFO of it says replica, link up, which takes up to
    // another 10 s. Without that, a failback that promotes it is undone: a Sentinel whose
    // last INFO still had it as the restarted master sees "master for more than 8 s" and
    // sends REPLICAOF before it learns of the failover (-failover-abort-slave-timeout).
    QString nodeSaid;
    QStringList seen;
    const bool synced = pollUntil(deadline, [&] {
        seen.clear();
        if (!d->nodeIsSyncedReplica(node.port, &nodeSaid))
            return false;
        bool all = true;
        for (const Instance &sentinel : d->sentinels) {
            QString said;
            all = d->sentinelSeesReplica(sentinel, node.port, true, &said) && all;
            seen << u"%1 %2 sees %3"_s.arg(sentinel.name, sentinel.address(), said);
        }
        return all;
    });
    if (!synced) {
        *error = d->withLogs(u"%1 (127.0.0.1:%2), restarted empty, did not become a synced replica "
                             "known as such to every Sentinel within %3 ms: it reports %4\n%5"_s.arg(node.name)
                                 .arg(node.port)
                                 .arg(timeoutMs)
                                 .arg(nodeSaid, seen.join(u'\n')));
        return false;
    }
    return true;
}

int RedisSentinelTopology::failover(int timeoutMs, QString *error)
{
    const QDeadlineTimer deadline(timeoutMs);
    const int oldPort = masterPort();
    if (oldPort < 0) {
        *error = d->withLogs(u"no Sentinel answers SENTINEL get-master-addr-by-name %1"_s.arg(d->options.masterName));
        return -1;
    }
    const auto remainingMs = [&deadline] { return static_cast<int>(std::max<qint64>(deadline.remainingTime(), 0)); };
    QStringList attempts;
    int turn = 0;
    for (;;) {
        // Refused ("-INPROG", "-NOGOODSLAVE") while a failover is still running or no
        // replica is fit to be promoted: ask again, each Sentinel in turn.
        QStringList lastAnswers;
        const bool accepted = pollUntil(deadline, [&] {
            const Instance &sentinel = d->sentinels.at(turn++ % d->sentinels.size());
            const QString said = d->answer(sentinel.port, {u"SENTINEL"_s, u"FAILOVER"_s, d->options.masterName});
            lastAnswers << u"%1 %2: %3"_s.arg(sentinel.name, sentinel.address(), said);
            if (lastAnswers.size() > d->sentinels.size())
                lastAnswers.removeFirst();
            return said == u"OK";
        });
        if (!accepted) {
            *error = d->withLogs(u"no Sentinel accepted SENTINEL FAILOVER %1 (master 127.0.0.1:%2) "
                                 "within %3 ms%4; the last answers:\n%5"_s.arg(d->options.masterName)
                                     .arg(oldPort)
                                     .arg(timeoutMs)
                                     .arg(attempts.isEmpty() ? QString() : u" ("_s + attempts.join(u"; "_s) + u')')
                                     .arg(lastAnswers.join(u'\n')));
            return -1;
        }
        // A Sentinel gives up a failover whose promotion does not show within its
        // failover-timeout; give it that and a little more, then ask again — but only while
        // every Sentinel still names the old master (otherwise this one is under way).
        const int attemptMs = std::min(remainingMs(), d->options.failoverTimeoutMs + 3000);
        QString attemptError;
        const int newPort = waitForFailover(oldPort, attemptMs, &attemptError);
        if (newPort > 0)
            return newPort;
        bool allNameOld = true;
        for (const Instance &sentinel : d->sentinels)
            allNameOld = allNameOld && d->sentinelsMaster(sentinel) == oldPort;
        if (!allNameOld || deadline.hasExpired()) {
            const int port = waitForFailover(oldPort, remainingMs(), error);
            if (port < 0 && !attempts.isEmpty())
                error->prepend(u"after %1 aborted attempt(s): "_s.arg(attempts.size()));
            return port;
        }
        attempts << u"attempt %1 aborted after %2 ms"_s.arg(attempts.size() + 1).arg(attemptMs);
    }
}

QByteArray RedisSentinelTopology::cli(int port, const QStringList &args) const
{
    const RunResult result = d->cli(port, args);
    return result.ok ? result.output.trimmed().toUtf8() : QByteArrayLiteral("(redis-cli failed)");
}

QString RedisSentinelTopology::logTail(int lines) const
{
    return d->logTail(lines);
}

QString RedisSentinelTopology::folder() const
{
    return d->folder->path();
}

} // namespace payonce::testsupport
