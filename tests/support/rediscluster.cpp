#include "serverharness.h"

#include "processtools.h"
#include "redisprocess.h"
#include "scratchfolder.h"

#include <QFile>
#include <QRegularExpression>
#include <QThread>

#include <algorithm>
#include <csignal>

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

using namespace detail;

namespace {

inline constexpr int slotCount = 16384;
inline constexpr int masterCount = 3;

/// One redis-server process of the cluster.
struct Instance : RedisProcess {
    int busPort = 0; ///< cluster-port: port + 10000 would not fit above 55535, so our own
    QString id;      ///< CLUSTER MYID, learned once the cluster is created

    /// Set by kill(): whether restartKilled() may start it, and what it served then.
    bool killed = false;
    QList<std::pair<int, int>> slotsAtKill;
};

/// One line of CLUSTER NODES.
struct ClusterNode {
    QString id;
    int port = 0; ///< 0 for "noaddr"
    QStringList flags;
    QString masterId; ///< "-" for a master
    QString linkState;
    QList<std::pair<int, int>> slots; ///< ranges, inclusive; importing/migrating entries left out

    bool isMaster() const { return flags.contains(u"master"); }
    bool failing() const
    {
        return flags.contains(u"fail") || flags.contains(u"fail?") || flags.contains(u"noaddr")
               || flags.contains(u"handshake");
    }
    bool serves(int slot) const
    {
        return std::any_of(slots.begin(), slots.end(),
                           [slot](const auto &range) { return slot >= range.first && slot <= range.second; });
    }
    /// "127.0.0.1:7001 master,fail", for error messages.
    QString describe() const { return u"127.0.0.1:%1 %2"_s.arg(port).arg(flags.join(u',')); }
};

QList<ClusterNode> parseClusterNodes(const QString &output)
{
    QList<ClusterNode> nodes;
    const QStringList lines = output.split(u'\n', Qt::SkipEmptyParts);
    for (const QString &line : lines) {
        const QStringList fields = line.trimmed().split(u' ', Qt::SkipEmptyParts);
        if (fields.size() < 8)
            continue;
        ClusterNode node;
        node.id = fields.at(0);
        // "127.0.0.1:7001@17001[,hostname]", ":0@0" when the address is unknown
        const QString address = fields.at(1).section(u'@', 0, 0);
        node.port = address.section(u':', -1).toInt();
        node.flags = fields.at(2).split(u',');
        node.masterId = fields.at(3);
        node.linkState = fields.at(7);
        for (qsizetype i = 8; i < fields.size(); ++i) {
            const QString &slot = fields.at(i);
            if (slot.startsWith(u'['))
                continue;
            bool okFirst = false;
            bool okLast = true;
            const int first = slot.section(u'-', 0, 0).toInt(&okFirst);
            const int last = slot.contains(u'-') ? slot.section(u'-', 1, 1).toInt(&okLast) : first;
            if (okFirst && okLast)
                node.slots.append({first, last});
        }
        nodes.append(node);
    }
    return nodes;
}

QString describeSlots(const QList<std::pair<int, int>> &slots)
{
    QStringList parts;
    for (const auto &[first, last] : slots)
        parts << (first == last ? QString::number(first) : u"%1-%2"_s.arg(first).arg(last));
    return parts.isEmpty() ? u"no slots"_s : parts.join(u',');
}

/// The line "key:value" of an INFO or CLUSTER INFO reply, its value ("" when missing).
} // namespace

struct RedisClusterTopology::Private : RedisTopologyState {
    RedisClusterTopology::Options options;
    QList<Instance> nodes;

    RunResult cli(int port, const QStringList &args) const override { return cli(port, args, false); }
    /// followRedirects: -c, redis-cli follows MOVED and ASK.
    RunResult cli(int port, const QStringList &args, bool followRedirects) const
    {
        QStringList arguments{u"-h"_s, u"127.0.0.1"_s, u"-p"_s, QString::number(port)};
        if (followRedirects)
            arguments.prepend(u"-c"_s);
        return run({u"redis-cli"_s, arguments + args}, {}, probeTimeoutMs);
    }

    QList<const RedisProcess *> processes() const override
    {
        QList<const RedisProcess *> all;
        for (const Instance &instance : nodes)
            all << &instance;
        return all;
    }

    /// CLUSTER NODES as this node sees it; false (and *said) when it does not answer.
    bool clusterView(const Instance &node, QList<ClusterNode> *view, QString *said = nullptr) const
    {
        const RunResult result = cli(node.port, {u"CLUSTER"_s, u"NODES"_s});
        if (!result.ok || result.output.startsWith(u"ERR")) {
            if (said)
                *said = u"(CLUSTER NODES failed: "_s + result.output.trimmed() + u')';
            return false;
        }
        *view = parseClusterNodes(result.output);
        return !view->isEmpty();
    }

    /// CLUSTER NODES from the first live node that answers; empty if none does.
    QList<ClusterNode> anyView() const
    {
        for (const Instance &node : nodes) {
            QList<ClusterNode> view;
            if (node.pid != 0 && clusterView(node, &view))
                return view;
        }
        return {};
    }

    Instance *byPort(int port)
    {
        for (Instance &node : nodes) {
            if (node.port == port)
                return &node;
        }
        return nullptr;
    }
    const Instance *byId(const QString &id) const
    {
        for (const Instance &node : nodes) {
            if (node.id == id)
                return &node;
        }
        return nullptr;
    }

    /// A node's config. No persistence; the replication settings keep a sync quick and off
    /// the disk (as in RedisSentinelTopology). nodes.conf lives in the node's dir: it is the
    /// node's identity and survives kill() for restartKilled(). A validity factor of 0 lets a
    /// replica fail over however long its link has been down.
    bool writeNodeConfig(const Instance &node, QString *error) const
    {
        const QString config = redisBaseConfig(node.port, node.dataDir, node.pidFile, node.logFile)
                               + u"cluster-enabled yes\n"
                                 "cluster-port %1\n"
                                 "cluster-config-file nodes.conf\n"
                                 "cluster-node-timeout %2\n"
                                 "cluster-replica-validity-factor 0\n"_s.arg(QString::number(node.busPort),
                                                                             QString::number(options.nodeTimeoutMs))
                               + QLatin1String(kDisklessReplication);
        return writeTextFile(node.configFile, config, error);
    }

    /// Start the node (its config already written) and wait until it answers PING.
    Readiness launch(Instance &instance, QString *error)
    {
        return launchRedis(
            instance, {}, [this, &instance] { return ping(instance); }, startTimeoutMs,
            u"or its cluster bus port %1"_s.arg(instance.busPort), error);
    }

    /// First start: two fresh free ports per attempt (client and cluster bus), the config
    /// written for them.
    bool launchOnFreePorts(Instance &instance, QString *error)
    {
        return retryOnBindFailure([&] {
                   instance.port = freeLoopbackPort();
                   instance.busPort = freeLoopbackPort();
                   if (instance.port <= 0 || instance.busPort <= 0) {
                       *error = u"no free loopback port for %1"_s.arg(instance.name);
                       return Readiness::Exited;
                   }
                   if (instance.port == instance.busPort)
                       return Readiness::BindFailed;
                   if (!writeNodeConfig(instance, error))
                       return Readiness::Exited;
                   return launch(instance, error);
               })
               == Readiness::Ready;
    }

    bool halt(Instance &instance, int signal) { return haltRedis(instance, signal); }

    /// cluster_state of this node's CLUSTER INFO ("" and *said when it does not answer).
    QString clusterState(const Instance &node, QString *said = nullptr) const
    {
        const RunResult info = cli(node.port, {u"CLUSTER"_s, u"INFO"_s});
        if (!info.ok) {
            if (said)
                *said = u"(redis-cli failed: "_s + info.output.trimmed() + u')';
            return {};
        }
        if (said) {
            *said = u"cluster_state:%1 slots_ok:%2 known_nodes:%3"_s.arg(
                infoField(info.output, u"cluster_state"), infoField(info.output, u"cluster_slots_ok"),
                infoField(info.output, u"cluster_known_nodes"));
        }
        return infoField(info.output, u"cluster_state");
    }

    /// role and, for a replica, master_link_status from INFO replication. *said: both.
    QString role(int port, bool *linkUp, QString *said) const
    {
        const RunResult info = cli(port, {u"INFO"_s, u"replication"_s});
        if (!info.ok) {
            *said = u"(redis-cli failed: "_s + info.output.trimmed() + u')';
            *linkUp = false;
            return {};
        }
        const QString role = infoField(info.output, u"role");
        const QString link = infoField(info.output, u"master_link_status");
        *linkUp = link == u"up";
        *said = role == u"slave" ? u"role:slave master_port:%1 master_link_status:%2"_s.arg(
                    infoField(info.output, u"master_port"), link)
                                 : u"role:"_s + role;
        return role;
    }

    /// After --cluster create: every node says cluster_state:ok with all slots served, knows
    /// every other node (none failing or still in handshake, every link connected); three of
    /// them are masters and the rest replicas whose link is up.
    bool waitUntilSettled(QString *error) const
    {
        QStringList seen;
        const bool settled = pollUntil(QDeadlineTimer(startTimeoutMs), [&] {
            seen.clear();
            bool all = true;
            int masters = 0;
            for (const Instance &node : nodes) {
                const RunResult info = cli(node.port, {u"CLUSTER"_s, u"INFO"_s});
                const bool stateOk = info.ok && infoField(info.output, u"cluster_state") == u"ok"
                                     && infoField(info.output, u"cluster_slots_ok") == QString::number(slotCount)
                                     && infoField(info.output, u"cluster_known_nodes") == QString::number(nodes.size());
                const QString stateSaid = info.ok ? u"cluster_state:%1 slots_ok:%2 known_nodes:%3"_s.arg(
                                              infoField(info.output, u"cluster_state"),
                                              infoField(info.output, u"cluster_slots_ok"),
                                              infoField(info.output, u"cluster_known_nodes"))
                                                  : u"(redis-cli failed: "_s + info.output.trimmed() + u')';
                QList<ClusterNode> view;
                QString viewSaid;
                QStringList troubled;
                if (clusterView(node, &view, &viewSaid)) {
                    for (const ClusterNode &other : std::as_const(view)) {
                        if (other.failing() || other.linkState != u"connected")
                            troubled << other.describe() + u' ' + other.linkState;
                    }
                    viewSaid = troubled.isEmpty() ? u"sees every node well"_s : u"sees "_s + troubled.join(u", "_s);
                }
                bool linkUp = false;
                QString roleSaid;
                const QString nodeRole = role(node.port, &linkUp, &roleSaid);
                if (nodeRole == u"master")
                    ++masters;
                const bool good = stateOk && !view.isEmpty() && troubled.isEmpty()
                                  && (nodeRole == u"master" || (nodeRole == u"slave" && linkUp));
                all = all && good;
                seen << u"%1 %2: %3; %4; %5"_s.arg(node.name, node.address(), stateSaid, roleSaid, viewSaid);
            }
            return all && masters == masterCount;
        });
        if (!settled) {
            *error = withLogs(u"the cluster did not settle within %1 s (every node must say "
                              "cluster_state:ok with all %2 slots, know all %3 nodes, %4 of them "
                              "masters and the others replicas with their link up):\n%5"_s.arg(startTimeoutMs / 1000)
                                  .arg(slotCount)
                                  .arg(nodes.size())
                                  .arg(masterCount)
                                  .arg(seen.join(u'\n')));
        }
        return settled;
    }
};

RedisClusterTopology::RedisClusterTopology() : d(std::make_unique<Private>())
{
}

RedisClusterTopology::~RedisClusterTopology()
{
    if (!d->folder)
        return;
    for (Instance &node : d->nodes)
        d->halt(node, SIGKILL);
}

std::unique_ptr<RedisClusterTopology> RedisClusterTopology::start(const Options &options, QString *error)
{
    if (options.replicasPerMaster < 0 || options.nodeTimeoutMs <= 0) {
        *error = u"RedisClusterTopology: replicasPerMaster must be >= 0 and nodeTimeoutMs > 0 (got %1, %2)"_s
                     .arg(options.replicasPerMaster)
                     .arg(options.nodeTimeoutMs);
        return nullptr;
    }
    std::unique_ptr<RedisClusterTopology> topology(new RedisClusterTopology);
    Private &d = *topology->d;
    d.options = options;
    d.folder = ScratchFolder::create(u"redis-cluster"_s, QString(), error);
    if (!d.folder)
        return nullptr;
    const int count = masterCount * (1 + options.replicasPerMaster);
    for (int i = 0; i < count; ++i) {
        Instance node;
        if (!d.place(node, u"node%1"_s.arg(i), true, error))
            return nullptr;
        d.nodes.append(node);
    }
    for (Instance &node : d.nodes) {
        if (!d.launchOnFreePorts(node, error))
            return nullptr;
    }

    // redis-cli assigns the slots, pairs replicas with masters (shuffled for
    // "anti-affinity", so which replica serves which master is not node order), gives each
    // node its config epoch and sends the CLUSTER MEETs (with our bus ports).
    QStringList create{u"--cluster"_s, u"create"_s};
    for (const Instance &node : std::as_const(d.nodes))
        create << node.address();
    create << u"--cluster-replicas"_s << QString::number(options.replicasPerMaster) << u"--cluster-yes"_s;
    const Command command{u"redis-cli"_s, create};
    const RunResult created = run(command, {}, startTimeoutMs);
    if (!created.ok) {
        RunResult plain = created;
        plain.output.remove(QRegularExpression(u"\x1b\\[[0-9;]*m"_s));
        *error = d.withLogs(u"creating the cluster failed: "_s + plain.describe(command));
        return nullptr;
    }
    if (!d.waitUntilSettled(error))
        return nullptr;
    for (Instance &node : d.nodes) {
        const RunResult id = d.cli(node.port, {u"CLUSTER"_s, u"MYID"_s});
        node.id = id.output.trimmed();
        if (!id.ok || node.id.size() != 40) {
            *error = d.withLogs(
                u"%1 (%2) did not answer CLUSTER MYID: %3"_s.arg(node.name, node.address(), id.output.trimmed()));
            return nullptr;
        }
    }
    return topology;
}

QStringList RedisClusterTopology::nodes() const
{
    QStringList addresses;
    for (const Instance &node : d->nodes)
        addresses << node.address();
    return addresses;
}

QList<int> RedisClusterTopology::masterPorts() const
{
    QList<int> ports;
    for (const ClusterNode &node : d->anyView()) {
        if (node.isMaster() && !node.failing())
            ports << node.port;
    }
    std::sort(ports.begin(), ports.end());
    return ports;
}

int RedisClusterTopology::masterPortForKey(const QString &key) const
{
    for (const Instance &node : d->nodes) {
        if (node.pid == 0)
            continue;
        const RunResult keyslot = d->cli(node.port, {u"CLUSTER"_s, u"KEYSLOT"_s, key});
        bool ok = false;
        const int slot = keyslot.output.trimmed().toInt(&ok);
        if (!keyslot.ok || !ok)
            continue;
        QList<ClusterNode> view;
        if (!d->clusterView(node, &view))
            continue;
        for (const ClusterNode &other : std::as_const(view)) {
            if (other.isMaster() && other.serves(slot))
                return other.port;
        }
        return -1;
    }
    return -1;
}

bool RedisClusterTopology::kill(int port, QString *error)
{
    Instance *node = d->byPort(port);
    if (!node) {
        *error = u"127.0.0.1:%1 is none of the cluster's nodes (%2)"_s.arg(port).arg(nodes().join(u", "_s));
        return false;
    }
    if (!pidAlive(node->pid)) {
        *error = u"%1 (127.0.0.1:%2) is not running"_s.arg(node->name).arg(port);
        return false;
    }
    // What it serves, as it says itself: waitForFailover() waits for these slots.
    node->slotsAtKill.clear();
    QList<ClusterNode> view;
    if (d->clusterView(*node, &view)) {
        for (const ClusterNode &entry : std::as_const(view)) {
            if (entry.flags.contains(u"myself") && entry.isMaster())
                node->slotsAtKill = entry.slots;
        }
    }
    if (!d->halt(*node, SIGKILL)) {
        *error = u"%1 (127.0.0.1:%2, pid %3) did not go after SIGKILL"_s.arg(node->name).arg(port).arg(node->pid);
        return false;
    }
    node->killed = true;
    return true;
}

int RedisClusterTopology::waitForFailover(int oldPort, int timeoutMs, QString *error)
{
    const Instance *old = d->byPort(oldPort);
    if (!old) {
        *error = u"127.0.0.1:%1 is none of the cluster's nodes (%2)"_s.arg(oldPort).arg(nodes().join(u", "_s));
        return -1;
    }
    QList<std::pair<int, int>> slots = old->slotsAtKill;
    if (slots.isEmpty()) {
        // Not killed through kill(): what the others still say it serves.
        for (const ClusterNode &entry : d->anyView()) {
            if (entry.id == old->id)
                slots = entry.slots;
        }
    }
    if (slots.isEmpty()) {
        *error = u"%1 (127.0.0.1:%2) served no slots (a replica?): nothing to fail over"_s.arg(old->name).arg(oldPort);
        return -1;
    }
    const QString slotText = describeSlots(slots);
    QStringList seen;
    int newPort = -1;
    const bool done = pollUntil(QDeadlineTimer(timeoutMs), [&] {
        seen.clear();
        bool all = true;
        QString agreed; // the id every live node names for all those slots
        for (const Instance &node : std::as_const(d->nodes)) {
            if (node.pid == 0 || !pidAlive(node.pid))
                continue;
            QString stateSaid;
            const QString state = d->clusterState(node, &stateSaid);
            QList<ClusterNode> view;
            QString viewSaid;
            QStringList owners; // distinct ids
            QStringList ownerText;
            if (d->clusterView(node, &view, &viewSaid)) {
                for (const ClusterNode &entry : std::as_const(view)) {
                    const bool servesSome = std::any_of(slots.begin(), slots.end(), [&entry](const auto &range) {
                        return entry.serves(range.first) || entry.serves(range.second);
                    });
                    if (servesSome) {
                        if (!owners.contains(entry.id))
                            owners << entry.id;
                        ownerText << entry.describe();
                    }
                }
                viewSaid = u"slots %1 served by %2"_s.arg(slotText, ownerText.isEmpty() ? u"nobody"_s
                                                                                        : ownerText.join(u" and "_s));
            }
            seen << u"%1 %2: %3; %4"_s.arg(node.name, node.address(), stateSaid, viewSaid);
            const bool good = state == u"ok" && owners.size() == 1 && !owners.contains(old->id)
                              && (agreed.isEmpty() || owners.contains(agreed));
            if (good)
                agreed = owners.constFirst();
            all = all && good;
        }
        if (!all || agreed.isEmpty())
            return false;
        const Instance *promoted = d->byId(agreed);
        if (!promoted) {
            seen << u"the new owner %1 is none of our nodes"_s.arg(agreed);
            return false;
        }
        const QString role = d->answer(promoted->port, {u"ROLE"_s}).section(u'\n', 0, 0);
        seen << u"%1 %2 answers ROLE: %3"_s.arg(promoted->name, promoted->address(), role);
        if (role != u"master")
            return false;
        newPort = promoted->port;
        return true;
    });
    if (!done) {
        *error = d->withLogs(u"no failover from %1 (127.0.0.1:%2, slots %3) within %4 ms:\n%5"_s.arg(old->name)
                                 .arg(oldPort)
                                 .arg(slotText)
                                 .arg(timeoutMs)
                                 .arg(seen.join(u'\n')));
        return -1;
    }
    return newPort;
}

bool RedisClusterTopology::restartKilled(int port, int timeoutMs, QString *error)
{
    const QDeadlineTimer deadline(timeoutMs);
    Instance *found = d->byPort(port);
    if (!found) {
        *error = u"127.0.0.1:%1 is none of the cluster's nodes (%2)"_s.arg(port).arg(nodes().join(u", "_s));
        return false;
    }
    Instance &node = *found;
    if (!node.killed) {
        *error = u"%1 (127.0.0.1:%2) was not killed (or was restarted already)"_s.arg(node.name).arg(port);
        return false;
    }
    if (pidAlive(node.pid)) {
        *error = u"%1 (127.0.0.1:%2) is still running"_s.arg(node.name).arg(port);
        return false;
    }
    // A killed master whose slots nobody took over comes back as their master (with no
    // replica to fail over to, nothing else can serve them). One with a live replica must
    // wait for the failover first: restarted in the middle of it, it would race its replica.
    bool expectMaster = false;
    if (!node.slotsAtKill.isEmpty()) {
        const QList<ClusterNode> view = d->anyView();
        bool takenOver = false;
        bool replicaAlive = false;
        for (const ClusterNode &entry : view) {
            if (entry.id != node.id && entry.isMaster() && entry.serves(node.slotsAtKill.first().first))
                takenOver = true;
            if (entry.masterId == node.id && !entry.failing())
                replicaAlive = true;
        }
        if (!takenOver && replicaAlive) {
            *error = u"%1 (127.0.0.1:%2) still serves slots %3 and has a live replica: restarting it "
                     "now would race the failover (waitForFailover first)"_s.arg(node.name)
                         .arg(port)
                         .arg(describeSlots(node.slotsAtKill));
            return false;
        }
        expectMaster = !takenOver;
    }
    // "Empty": nothing a sync may have left in its dir gets loaded. nodes.conf stays: it is
    // who the node is. Without it the node comes back as a stranger with a new id (alone,
    // cluster_state:fail; the others list its old id as "noaddr"), to be introduced with
    // CLUSTER MEET <ip> <port> <bus port>, made a replica with CLUSTER REPLICATE and its
    // old id forgotten with CLUSTER FORGET on every node.
    QFile::remove(node.dataDir + u"/dump.rdb"_s);
    if (!d->writeNodeConfig(node, error))
        return false;
    if (d->launch(node, error) != Readiness::Ready)
        return false;
    node.killed = false;
    node.slotsAtKill.clear();

    QStringList seen;
    const bool rejoined = pollUntil(deadline, [&] {
        seen.clear();
        const QString myId = d->answer(node.port, {u"CLUSTER"_s, u"MYID"_s});
        bool linkUp = false;
        QString roleSaid;
        const QString role = d->role(node.port, &linkUp, &roleSaid);
        seen << u"%1 %2 (restarted): id %3 (was %4); %5"_s.arg(node.name, node.address(), myId, node.id, roleSaid);
        bool all = myId == node.id && (expectMaster ? role == u"master" : (role == u"slave" && linkUp));
        for (const Instance &other : std::as_const(d->nodes)) {
            if (other.pid == 0 || !pidAlive(other.pid))
                continue;
            QString stateSaid;
            const QString state = d->clusterState(other, &stateSaid);
            QList<ClusterNode> view;
            QString viewSaid = u"does not list it"_s;
            bool seesIt = false;
            if (d->clusterView(other, &view, &viewSaid)) {
                for (const ClusterNode &entry : std::as_const(view)) {
                    if (entry.id != node.id)
                        continue;
                    viewSaid = u"sees it as "_s + entry.describe() + u' ' + entry.linkState;
                    seesIt = !entry.failing() && entry.linkState == u"connected"
                             && (expectMaster ? entry.isMaster() : entry.flags.contains(u"slave"));
                }
            }
            if (&other != &node)
                seen << u"%1 %2: %3; %4"_s.arg(other.name, other.address(), stateSaid, viewSaid);
            all = all && state == u"ok" && seesIt;
        }
        return all;
    });
    if (!rejoined) {
        *error = d->withLogs(u"%1 (127.0.0.1:%2), restarted empty with its nodes.conf, did not rejoin "
                             "as %3 seen so by every node, with cluster_state:ok everywhere, within "
                             "%4 ms:\n%5"_s.arg(node.name)
                                 .arg(port)
                                 .arg(expectMaster ? u"the master of its slots (nobody took them over)"_s
                                                   : u"a replica with its link up"_s)
                                 .arg(timeoutMs)
                                 .arg(seen.join(u'\n')));
        return false;
    }
    return true;
}

QByteArray RedisClusterTopology::cli(int port, const QStringList &args) const
{
    const RunResult result = d->cli(port, args, true);
    return result.ok ? result.output.trimmed().toUtf8() : QByteArrayLiteral("(redis-cli failed)");
}

QString RedisClusterTopology::logTail(int lines) const
{
    return d->logTail(lines);
}

QString RedisClusterTopology::folder() const
{
    return d->folder->path();
}

} // namespace payonce::testsupport
