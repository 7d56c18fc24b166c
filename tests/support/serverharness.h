#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <memory>

namespace payonce::testsupport {

/// Throwaway servers for integration tests: each on a free loopback port in its own
/// temporary folder, started by the test itself, stopped and removed when the object
/// dies — and, through a reaper process, also when the test process is killed.
/// Works as root (initdb and mariadbd run as the postgres and mysql users) and as a
/// normal user. Every start() failure leaves a message in *error that ends with the
/// tail of the server's log, so the test can QVERIFY2 on it: a server that cannot start
/// is a failed test, never a skipped one.

/// redis-server, no persistence.
class RedisServer {
public:
    struct Options {
        QString password; ///< empty: no AUTH required
    };
    static std::unique_ptr<RedisServer> start(const Options &options, QString *error);
    static std::unique_ptr<RedisServer> start(QString *error) { return start(Options{}, error); }
    ~RedisServer();

    int port() const;
    QString password() const;
    /// "redis://[:password@]127.0.0.1:<port>/0"
    QString url() const;
    /// The server's temporary folder (config, pid file, log); gone after the destructor.
    QString folder() const;

    /// SIGKILL the server (no goodbye to clients) and wait until it is gone.
    bool kill();
    /// Start again on the same port, empty (no persistence), after kill() or stop().
    bool startAgain(QString *error);
    /// Graceful stop (SHUTDOWN NOSAVE semantics).
    bool stop();
    QString logTail(int lines = 30) const;
    /// Runs redis-cli against the server (its password given); the trimmed standard output,
    /// "(redis-cli failed)" when it did not run.
    QByteArray cli(const QStringList &args) const;
    /// Moves the listener to `port` (CONFIG SET port) and closes every client connection,
    /// keeping the process, its data and its run_id: what a client sees when its endpoint
    /// fails over to another instance, or back. port(), url() and startAgain() follow.
    bool moveTo(int port, QString *error);

private:
    RedisServer();
    struct Private;
    std::unique_ptr<Private> d;
};

/// A failover between two Redis instances, both kept running: `leaving` moves to a free
/// port and `arriving` takes over the port `leaving` had; every client connection to
/// either is closed. Clients of that port now reach `arriving`.
bool takeOverEndpoint(RedisServer &leaving, RedisServer &arriving, QString *error);

/// One Redis master, one replica and three Sentinels (redis-server --sentinel; quorum 2) on
/// loopback, in one temporary folder; no persistence. Sentinel's down-after and failover
/// timeouts are short so that a failover takes a few seconds.
///
/// start() returns once the replica is in sync and every Sentinel knows the master, the
/// replica and the two other Sentinels, so a killMaster() right away fails over.
/// Sentinel's own pace shows through: a node restarted by restartKilled() comes up as an
/// empty master, the Sentinels convert it into a replica only ~10 s later and know it as one
/// up to 10 s after that (restartKilled takes 10–20 s); likewise, after failover() the
/// previous master goes on answering ROLE "master" for ~10 s until the Sentinels convert it.
/// A client that follows the Sentinels writes to neither.
/// With Options::password / sentinelPassword set, every redis-cli the topology runs (its
/// waits, cli()) authenticates to the node or Sentinel on that port (REDISCLI_AUTH).
class RedisSentinelTopology {
public:
    struct Options {
        QString masterName = QStringLiteral("payonce");
        int downAfterMs =
            2000; ///< 1 s once let a loaded machine (load 5-11) fail a restarted node back too early; suspected, not confirmed
        int failoverTimeoutMs = 4000;
        /// AUTH for the data nodes: requirepass and masterauth on both (so the replica
        /// syncs, and a restarted node re-syncs), `sentinel auth-pass` in every Sentinel.
        /// Empty: none.
        QString password;
        /// AUTH for the Sentinels themselves: requirepass in each sentinel.conf, and
        /// `sentinel sentinel-pass` so that they reach one another. Empty: none.
        QString sentinelPassword;
    };
    static std::unique_ptr<RedisSentinelTopology> start(const Options &options, QString *error);
    static std::unique_ptr<RedisSentinelTopology> start(QString *error) { return start(Options{}, error); }
    ~RedisSentinelTopology();

    QString masterName() const;
    /// "127.0.0.1:<port>" of each Sentinel.
    QStringList sentinels() const;
    /// The two data nodes' ports (fixed for the topology's life: a restarted node keeps its port).
    QList<int> dataPorts() const;
    /// The master's port as the Sentinels report it now (SENTINEL get-master-addr-by-name on
    /// the first that answers); -1 if none answers.
    int masterPort() const;
    /// SIGKILL the current master (no goodbye to clients) and wait until its process is gone.
    /// Returns its port; -1 on failure (error set).
    int killMaster(QString *error);
    /// Waits until every Sentinel names a master other than `oldPort` and that node answers
    /// ROLE with "master". The new master's port; -1 on timeout (error says what each Sentinel said).
    int waitForFailover(int oldPort, int timeoutMs, QString *error);
    /// Starts the killed node again on its port, empty. The Sentinels reconfigure it as a replica
    /// of the current master; waits (up to timeoutMs) until it reports master_link_status:up.
    /// It also waits until every Sentinel's own INFO of it says replica, link up (Sentinel asks
    /// a replica every 10 s): a failback that promoted it earlier would be undone by a
    /// Sentinel that still remembers it as the restarted master. Refused while a Sentinel
    /// still names it master (an empty master would be copied onto the replica).
    bool restartKilled(int timeoutMs, QString *error);
    /// SENTINEL FAILOVER <name> on one Sentinel (a failback when the other node is the replica),
    /// then waitForFailover from the current master. The new master's port; -1 on failure.
    /// Asked again until a Sentinel accepts it ("-INPROG", "-NOGOODSLAVE" while not possible),
    /// and again if that failover is aborted while every Sentinel still names the old master.
    int failover(int timeoutMs, QString *error);
    /// redis-cli -p <port> args…; trimmed stdout, "(redis-cli failed)" when it did not run.
    /// Authenticated with the Sentinels' password on a Sentinel's port, the nodes' on a data
    /// node's, none on any other port.
    QByteArray cli(int port, const QStringList &args) const;
    /// The last lines of every node's and Sentinel's log, each headed by its name (for failure messages).
    QString logTail(int lines = 20) const;
    /// The temporary folder (configs, pid files, logs, the data nodes' dirs); gone after the
    /// destructor.
    QString folder() const;

private:
    RedisSentinelTopology();
    struct Private;
    std::unique_ptr<Private> d;
};

/// A Redis Cluster on loopback: three masters, each with one replica (six redis-server
/// processes with cluster-enabled yes, joined by `redis-cli --cluster create ...
/// --cluster-replicas 1 --cluster-yes`), in one temporary folder, no persistence, a short
/// cluster-node-timeout so a failover takes a few seconds.
///
/// Each node has its own client port and cluster bus port (`cluster-port`, not port + 10000)
/// and its own dir with its nodes.conf. start() returns once every node says
/// cluster_state:ok with all 16384 slots served and knows every other node, three nodes are
/// masters and every replica's link is up. Which replica serves which master is redis-cli's
/// choice (it shuffles them), not node order: ask masterPorts() / masterPortForKey().
/// A node restarted by restartKilled() keeps its nodes.conf, so it comes back as itself
/// (same id) and, when its slots were failed over, is a synced replica of the new master
/// within a fraction of a second.
class RedisClusterTopology {
public:
    struct Options {
        int replicasPerMaster = 1; ///< 0: three masters only
        int nodeTimeoutMs = 1000;
    };
    static std::unique_ptr<RedisClusterTopology> start(const Options &options, QString *error);
    static std::unique_ptr<RedisClusterTopology> start(QString *error) { return start(Options{}, error); }
    ~RedisClusterTopology();

    /// "127.0.0.1:<port>" of every node (masters and replicas), the seeds a client starts from.
    QStringList nodes() const;
    /// Ports of the nodes that are masters now (CLUSTER NODES asked of any node that answers), sorted.
    /// A master flagged fail or fail? is left out.
    QList<int> masterPorts() const;
    /// The port of the master serving `key`'s hash slot now (CLUSTER KEYSLOT, then the slot map).
    /// -1 if no node answers or nobody serves the slot.
    int masterPortForKey(const QString &key) const;
    /// SIGKILL the node on `port` and wait until its process is gone.
    /// Remembers the slots it served (for waitForFailover) and its id (for restartKilled).
    bool kill(int port, QString *error);
    /// Waits until every live node reports cluster_state:ok and the slots the killed master
    /// `oldPort` served are served by another node that answers ROLE master. The new master's
    /// port; -1 on timeout (the error says what each node said).
    int waitForFailover(int oldPort, int timeoutMs, QString *error);
    /// Starts a killed node again on its port, empty, and waits (up to timeoutMs) until it has
    /// rejoined as a replica with its link up and cluster_state is ok everywhere.
    /// Its nodes.conf (the node's identity) is kept across the restart, so on Redis 7.0 it
    /// comes back as itself (same id, checked), learns from the others' newer config epoch
    /// that its slots moved, turns itself into a replica of the new master and syncs
    /// (diskless) — well under a second. (Without nodes.conf it would be a stranger with a new
    /// id: alone, cluster_state:fail, its old id listed by the others as "noaddr".)
    /// A killed master whose slots nobody took over (no replica: replicasPerMaster 0) comes
    /// back as their master instead, and is waited for as such. Refused while the killed
    /// master still serves its slots and has a live replica (waitForFailover first).
    bool restartKilled(int port, int timeoutMs, QString *error);
    /// redis-cli -c -p <port> args…; trimmed stdout, "(redis-cli failed)" when it did not run.
    QByteArray cli(int port, const QStringList &args) const;
    /// The last lines of every node's log, each headed by its name (for failure messages).
    QString logTail(int lines = 20) const;
    /// The temporary folder (configs, pid files, logs, the nodes' dirs); gone after the destructor.
    QString folder() const;

private:
    RedisClusterTopology();
    struct Private;
    std::unique_ptr<Private> d;
};

namespace detail {
struct DatabaseServerState;
}

/// What PostgresServer and MariaDbServer have in common: a user "payonce" with a generated
/// password and a database "payonce", reached on 127.0.0.1:port().
class DatabaseServer {
public:
    virtual ~DatabaseServer();
    DatabaseServer(const DatabaseServer &) = delete;
    DatabaseServer &operator=(const DatabaseServer &) = delete;

    int port() const;
    QString user() const;
    QString password() const;
    QString database() const;
    /// "<scheme>://payonce:<password>@127.0.0.1:<port>/payonce"
    QString url() const;
    /// The same URL with another password (for wrong-password tests).
    QString urlWithPassword(const QString &password) const;
    /// The server's temporary folder (data/, log, unix socket); gone after the destructor.
    QString folder() const;

    bool stop();                     ///< PostgreSQL: fast shutdown; MariaDB: graceful; data kept
    bool startAgain(QString *error); ///< same port, same data
    QString logTail(int lines = 30) const;

protected:
    explicit DatabaseServer(std::unique_ptr<detail::DatabaseServerState> state);
    std::unique_ptr<detail::DatabaseServerState> m_state;
};

/// A PostgreSQL 15 cluster with scram-sha-256 authentication: the superuser is "payonce",
/// so a wrong password can be tested. url() is "postgresql://…".
class PostgresServer : public DatabaseServer {
public:
    static std::unique_ptr<PostgresServer> start(QString *error);
    ~PostgresServer() override;

    /// Where initdb, pg_ctl, psql … are taken from: $PAYONCE_PG_BINDIR if set, else
    /// /usr/lib/postgresql/15/bin. Tests use it to run the matching psql.
    static QString binDir();

private:
    PostgresServer();
    struct Private;
    Private *d; ///< owned by DatabaseServer (m_state)
};

/// A MariaDB 10.11 server: the user is "payonce"@"127.0.0.1" with all privileges on the
/// database "payonce". url() is "mariadb://…".
class MariaDbServer : public DatabaseServer {
public:
    static std::unique_ptr<MariaDbServer> start(QString *error);
    ~MariaDbServer() override;

private:
    MariaDbServer();
    struct Private;
    Private *d; ///< owned by DatabaseServer (m_state)
};

/// The dialect a suite registered with payonce_add_dialect_test() runs against, from
/// PAYONCE_TEST_DIALECT ("sqlite", "postgresql", "mariadb"; unset means sqlite).
enum class Dialect {
    Sqlite,
    PostgreSql,
    MariaDb
};
Dialect dialectUnderTest();
QString dialectName(Dialect dialect);

/// A database of the dialect under test, ready for payonce: for SQLite a file in a
/// temporary folder, otherwise a server started as above. url() is what --db takes.
class TestDatabase {
public:
    static std::unique_ptr<TestDatabase> start(Dialect dialect, QString *error);
    ~TestDatabase();

    Dialect dialect() const;
    QString url() const;
    /// Stop and start the server (same port, same data). SQLite: nothing to restart, true.
    bool restart(QString *error);
    bool stop();
    bool startAgain(QString *error);
    /// The server object, or null for SQLite.
    PostgresServer *postgres() const;
    MariaDbServer *mariadb() const;

private:
    TestDatabase();
    struct Private;
    std::unique_ptr<Private> d;
};

/// A free TCP port on 127.0.0.1 (bound and released; racy in principle, retried by the
/// servers' start on a bind failure).
int freeLoopbackPort();
/// Whether something accepts TCP connections on 127.0.0.1:port (waits up to 1 s).
bool loopbackPortAcceptsConnections(int port);

} // namespace payonce::testsupport
