// The server harness itself: each server starts and answers with its generated password,
// refuses a wrong one, survives (or, for redis, is emptied by) a restart on the same port,
// a Redis Sentinel topology fails over and back (also with passwords on its nodes and
// Sentinels), a Redis Cluster fails over and takes the killed master back as a replica,
// and each leaves nothing behind — neither
// after its destructor nor after the test process is SIGKILLed (the reaper's job).

#include "serverharness.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QSet>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QThread>

#include <csignal>

#include <sys/types.h>
#include <unistd.h>

using namespace payonce::testsupport;
using namespace Qt::StringLiterals;

namespace {

struct ClientResult {
    int exitCode = -1;
    QString output;
};

ClientResult runClient(const QString &program, const QStringList &arguments, const QProcessEnvironment &extra = {})
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(extra);
    process.setProcessEnvironment(env);
    process.start(program, arguments);
    if (!process.waitForFinished(30'000)) {
        process.kill();
        process.waitForFinished();
        return {-1, u"timed out: "_s + process.errorString()};
    }
    ClientResult result;
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.output = QString::fromLocal8Bit(process.readAll()).trimmed();
    return result;
}

ClientResult psql(const PostgresServer &server, const QString &password, const QString &sql)
{
    QProcessEnvironment env;
    env.insert(u"PGPASSWORD"_s, password);
    return runClient(PostgresServer::binDir() + u"/psql"_s,
                     {u"-X"_s, u"-A"_s, u"-t"_s, u"-v"_s, u"ON_ERROR_STOP=1"_s, u"-h"_s, u"127.0.0.1"_s, u"-p"_s,
                      QString::number(server.port()), u"-U"_s, server.user(), u"-d"_s, server.database(), u"-c"_s, sql},
                     env);
}

ClientResult mariadb(const MariaDbServer &server, const QString &password, const QString &sql)
{
    return runClient(u"mariadb"_s, {u"--no-defaults"_s, u"--protocol=TCP"_s, u"-h"_s, u"127.0.0.1"_s, u"-P"_s,
                                    QString::number(server.port()), u"-u"_s, server.user(), u"--password="_s + password,
                                    u"-N"_s, u"-B"_s, u"-e"_s, sql, server.database()});
}

/// A minimal RESP client: sends one command, returns the first reply line ("+OK",
/// ":0", "-ERR ...") or, for a bulk string, its value.
class RedisConnection {
public:
    bool open(int port)
    {
        m_socket.connectToHost(u"127.0.0.1"_s, static_cast<quint16>(port));
        return m_socket.waitForConnected(5000);
    }
    QByteArray command(const QByteArrayList &parts)
    {
        QByteArray request = "*" + QByteArray::number(parts.size()) + "\r\n";
        for (const QByteArray &part : parts)
            request += "$" + QByteArray::number(part.size()) + "\r\n" + part + "\r\n";
        m_socket.write(request);
        const QByteArray line = readLine();
        if (line.startsWith('$') && line != "$-1") {
            const int length = line.mid(1).toInt();
            while (m_socket.bytesAvailable() < length + 2 && m_socket.waitForReadyRead(5000)) {
            }
            return m_socket.read(length + 2).chopped(2);
        }
        return line;
    }

private:
    QByteArray readLine()
    {
        while (!m_socket.canReadLine()) {
            if (!m_socket.waitForReadyRead(5000))
                return "(no reply: " + m_socket.errorString().toUtf8() + ")";
        }
        return m_socket.readLine().trimmed();
    }
    QTcpSocket m_socket;
};

/// Processes whose command line mentions path (a server left behind).
QStringList processesMentioning(const QString &path)
{
    QStringList found;
    const QByteArray needle = QFile::encodeName(path);
    const QStringList pids = QDir(u"/proc"_s).entryList({u"[0-9]*"_s}, QDir::Dirs);
    for (const QString &pid : pids) {
        if (pid == QString::number(::getpid()))
            continue;
        QFile cmdline(u"/proc/"_s + pid + u"/cmdline"_s);
        if (!cmdline.open(QIODevice::ReadOnly))
            continue;
        QByteArray text = cmdline.readAll();
        if (text.contains(needle))
            found << pid + u": "_s + QString::fromLocal8Bit(text.replace('\0', ' '));
    }
    return found;
}

/// Reapers watching path (they carry it in their environment, not argv).
int reapersFor(const QString &path)
{
    const QByteArray needle = "PAYONCE_REAPER_FOLDER=" + QFile::encodeName(path) + '\0';
    int count = 0;
    const QStringList pids = QDir(u"/proc"_s).entryList({u"[0-9]*"_s}, QDir::Dirs);
    for (const QString &pid : pids) {
        // Its `sleep` inherits the environment too; count the script only.
        QFile cmdline(u"/proc/"_s + pid + u"/cmdline"_s);
        if (!cmdline.open(QIODevice::ReadOnly) || !cmdline.readAll().contains("payonce-reaper.sh"))
            continue;
        QFile environ(u"/proc/"_s + pid + u"/environ"_s);
        if (environ.open(QIODevice::ReadOnly) && environ.readAll().contains(needle))
            ++count;
    }
    return count;
}

/// The server's process is gone when stop()/kill() return. One CI run still saw its port
/// accept a connection right after kill(): free ports come from one range shared with the
/// tests running in parallel, whose short-lived listeners can take a freed port for a
/// moment. So the port must close within a few seconds rather than at once.
bool portClosesSoon(int port)
{
    QDeadlineTimer deadline(3000);
    while (loopbackPortAcceptsConnections(port)) {
        if (deadline.hasExpired())
            return false;
        QThread::msleep(50);
    }
    return true;
}

/// The pids in a folder's *.pid files (read before its servers go; redis-server rewrites
/// its command line, so processesMentioning() cannot find it).
QList<qint64> pidsInFolder(const QString &folder)
{
    QList<qint64> pids;
    const QStringList files = QDir(folder).entryList({u"*.pid"_s}, QDir::Files);
    for (const QString &name : files) {
        QFile file(folder + u'/' + name);
        if (file.open(QIODevice::ReadOnly))
            pids << file.readLine().trimmed().toLongLong();
    }
    return pids;
}

/// A redis-server with that pid still runs (a zombie does not count; a reused pid that is
/// no redis-server does not either).
bool redisServerRunning(qint64 pid)
{
    QFile comm(u"/proc/%1/comm"_s.arg(pid));
    if (!comm.open(QIODevice::ReadOnly) || comm.readAll().trimmed() != "redis-server")
        return false;
    QFile stat(u"/proc/%1/stat"_s.arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')');
    return close > 0 && close + 2 < line.size() && line.at(close + 2) != 'Z';
}

/// QVERIFY2 cuts its message at 1 KB; a topology's error ends with five logs.
bool sayWhy(bool ok, const QString &error)
{
    if (!ok)
        qWarning("%s", qPrintable(error));
    return ok;
}

/// After a server object is gone: its port is closed, its folder and reaper are gone.
void verifyNothingLeft(int port, const QString &folder)
{
    QVERIFY2(portClosesSoon(port), qPrintable(u"port %1 still open"_s.arg(port)));
    QVERIFY2(!QFileInfo::exists(folder), qPrintable(folder + u" still exists"_s));
    QVERIFY2(processesMentioning(folder).isEmpty(), qPrintable(processesMentioning(folder).join(u'\n')));
    // The reaper polls once a second and exits when it finds the folder gone.
    QTRY_COMPARE_WITH_TIMEOUT(reapersFor(folder), 0, 5000);
}

} // namespace

class TestServerHarness : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void freePort()
    {
        const int port = freeLoopbackPort();
        QVERIFY(port > 0);
        QVERIFY(portClosesSoon(port));
    }

    void redis()
    {
        const QString password = u"redis-password"_s;
        QString error;
        QElapsedTimer timer;
        timer.start();
        auto server = RedisServer::start({password}, &error);
        QVERIFY2(server, qPrintable(error));
        qInfo("redis-server ready in %lld ms", timer.elapsed());
        const int port = server->port();
        const QString folder = server->folder();
        QCOMPARE(server->url(), u"redis://:redis-password@127.0.0.1:%1/0"_s.arg(port));
        QVERIFY(QFileInfo(folder).isDir());
        QCOMPARE(reapersFor(folder), 1);

        {
            RedisConnection connection;
            QVERIFY(connection.open(port));
            QVERIFY2(connection.command({"PING"}).startsWith("-NOAUTH"), "PING without AUTH");
            const QByteArray wrong = connection.command({"AUTH", "not-the-password"});
            QVERIFY2(wrong.startsWith("-WRONGPASS") || wrong.startsWith("-ERR"), wrong.constData());
            QCOMPARE(connection.command({"AUTH", password.toUtf8()}), QByteArray("+OK"));
            QCOMPARE(connection.command({"PING"}), QByteArray("+PONG"));
            QCOMPARE(connection.command({"SET", "key", "value"}), QByteArray("+OK"));
            QCOMPARE(connection.command({"DBSIZE"}), QByteArray(":1"));
        }

        QVERIFY(server->kill());
        QVERIFY(portClosesSoon(port));
        timer.restart();
        QVERIFY2(server->startAgain(&error), qPrintable(error));
        qInfo("redis-server started again in %lld ms", timer.elapsed());
        QCOMPARE(server->port(), port);
        {
            RedisConnection connection;
            QVERIFY(connection.open(port));
            QCOMPARE(connection.command({"AUTH", password.toUtf8()}), QByteArray("+OK"));
            QCOMPARE(connection.command({"DBSIZE"}), QByteArray(":0"));
            QCOMPARE(connection.command({"GET", "key"}), QByteArray("$-1"));
        }

        QVERIFY(server->stop());
        QVERIFY(portClosesSoon(port));
        QVERIFY2(server->startAgain(&error), qPrintable(error));
        QVERIFY(!server->logTail().isEmpty());

        server.reset();
        verifyNothingLeft(port, folder);
    }

    void redisWithoutPassword()
    {
        QString error;
        auto server = RedisServer::start(&error);
        QVERIFY2(server, qPrintable(error));
        QCOMPARE(server->url(), u"redis://127.0.0.1:%1/0"_s.arg(server->port()));
        const ClientResult ping = runClient(
            u"redis-cli"_s, {u"-h"_s, u"127.0.0.1"_s, u"-p"_s, QString::number(server->port()), u"ping"_s});
        QCOMPARE(ping.output, u"PONG"_s);
    }

    void failedStartExplainsAndLeavesNothing()
    {
        QString error;
        auto server = RedisServer::start(&error);
        QVERIFY2(server, qPrintable(error));
        const int port = server->port();
        QVERIFY(server->kill());
        QTcpServer squatter; // startAgain must keep its port, so it cannot dodge this
        QVERIFY(squatter.listen(QHostAddress::LocalHost, static_cast<quint16>(port)));
        QVERIFY(!server->startAgain(&error));
        QVERIFY2(error.contains(u"could not bind"_s) && error.contains(u"Address already in use"_s), qPrintable(error));
        QVERIFY2(processesMentioning(server->folder()).isEmpty(),
                 qPrintable(processesMentioning(server->folder()).join(u'\n')));
        qInfo("the error reads:\n%s", qPrintable(error));
        squatter.close();
        QVERIFY2(server->startAgain(&error), qPrintable(error));
    }

    void redisSentinel_data()
    {
        QTest::addColumn<QString>("password");
        QTest::addColumn<QString>("sentinelPassword");
        QTest::newRow("no passwords") << QString() << QString();
        QTest::newRow("passwords") << u"node-secret"_s << u"sentinel \"secret\""_s;
    }

    void redisSentinel()
    {
        QFETCH(QString, password);
        QFETCH(QString, sentinelPassword);
        RedisSentinelTopology::Options options;
        options.password = password;
        options.sentinelPassword = sentinelPassword;
        QString error;
        QElapsedTimer timer;
        timer.start();
        auto topology = RedisSentinelTopology::start(options, &error);
        QVERIFY2(sayWhy(topology != nullptr, error), qPrintable(error));
        qInfo("Sentinel topology ready in %lld ms (master, replica in sync, three Sentinels "
              "that know it all)",
              timer.elapsed());
        const QString folder = topology->folder();
        QCOMPARE(reapersFor(folder), 1);
        QCOMPARE(topology->masterName(), u"payonce"_s);
        const QList<int> dataPorts = topology->dataPorts();
        QCOMPARE(dataPorts.size(), 2);
        QList<int> ports = dataPorts;
        const QStringList sentinels = topology->sentinels();
        QCOMPARE(sentinels.size(), 3);
        for (const QString &sentinel : sentinels) {
            QVERIFY2(sentinel.startsWith(u"127.0.0.1:"), qPrintable(sentinel));
            ports << sentinel.section(u':', 1).toInt();
            QCOMPARE(topology->cli(ports.constLast(), {u"ping"_s}), QByteArray("PONG"));
        }
        QCOMPARE(QSet<int>(ports.begin(), ports.end()).size(), 5);
        // The passwords are in force: without AUTH every node and Sentinel refuses; cli()
        // (above and below) and the topology's own waits authenticated.
        for (qsizetype i = 0; i < ports.size(); ++i) {
            const QString expected = i < dataPorts.size() ? password : sentinelPassword;
            RedisConnection connection;
            QVERIFY(connection.open(ports.at(i)));
            const QByteArray pong = connection.command({"PING"});
            if (expected.isEmpty()) {
                QCOMPARE(pong, QByteArray("+PONG"));
                continue;
            }
            QVERIFY2(pong.startsWith("-NOAUTH"), pong.constData());
            const QByteArray other = i < dataPorts.size() ? sentinelPassword.toUtf8() : password.toUtf8();
            QVERIFY2(connection.command({"AUTH", other}).startsWith("-WRONGPASS"), "the other password");
            QCOMPARE(connection.command({"AUTH", expected.toUtf8()}), QByteArray("+OK"));
            QCOMPARE(connection.command({"PING"}), QByteArray("+PONG"));
        }
        QList<qint64> pids = pidsInFolder(folder);
        QCOMPARE(pids.size(), 5);

        const int original = topology->masterPort();
        QCOMPARE(original, dataPorts.at(0));
        const int other = dataPorts.at(1);
        QCOMPARE(topology->cli(original, {u"SET"_s, u"sentinel-key"_s, u"kept"_s}), QByteArray("OK"));
        // Replicated before the kill: the failover must not lose it.
        QCOMPARE(topology->cli(original, {u"WAIT"_s, u"1"_s, u"1000"_s}), QByteArray("1"));

        timer.restart();
        const int killed = topology->killMaster(&error);
        QVERIFY2(sayWhy(killed == original, error), qPrintable(error));
        QVERIFY(portClosesSoon(original));
        const int promoted = topology->waitForFailover(original, 30'000, &error);
        QVERIFY2(sayWhy(promoted == other, error), qPrintable(u"promoted %1: %2"_s.arg(promoted).arg(error)));
        const qint64 failoverMs = timer.elapsed();
        QCOMPARE(topology->masterPort(), other);
        QCOMPARE(topology->cli(other, {u"GET"_s, u"sentinel-key"_s}), QByteArray("kept"));

        timer.restart();
        QVERIFY2(sayWhy(topology->restartKilled(60'000, &error), error), qPrintable(error));
        const qint64 restartMs = timer.elapsed();
        QCOMPARE(topology->cli(original, {u"ROLE"_s}).split('\n').value(0), QByteArray("slave"));
        QCOMPARE(topology->cli(original, {u"GET"_s, u"sentinel-key"_s}), QByteArray("kept"));
        QVERIFY2(!topology->restartKilled(1000, &error), "a second restart without a kill");

        timer.restart();
        const int back = topology->failover(60'000, &error);
        QVERIFY2(sayWhy(back == original, error), qPrintable(u"failed back to %1: %2"_s.arg(back).arg(error)));
        const qint64 failbackMs = timer.elapsed();
        QCOMPARE(topology->masterPort(), original);
        QCOMPARE(topology->cli(original, {u"GET"_s, u"sentinel-key"_s}), QByteArray("kept"));
        QCOMPARE(topology->cli(original, {u"SET"_s, u"after-failback"_s, u"1"_s}), QByteArray("OK"));
        qInfo("Sentinel failover %lld ms (SIGKILL to every Sentinel naming the replica, promoted), "
              "restart as a synced replica %lld ms, failback %lld ms (SENTINEL FAILOVER to every "
              "Sentinel naming the original node)",
              failoverMs, restartMs, failbackMs);
        QVERIFY(!topology->logTail(5).isEmpty());

        pids = pidsInFolder(folder); // the restarted node has a new pid
        QCOMPARE(pids.size(), 5);
        topology.reset();
        for (const qint64 pid : std::as_const(pids))
            QVERIFY2(!redisServerRunning(pid), qPrintable(u"redis-server %1 still runs"_s.arg(pid)));
        for (const int port : std::as_const(ports))
            QVERIFY2(portClosesSoon(port), qPrintable(u"port %1 still open"_s.arg(port)));
        verifyNothingLeft(original, folder);
    }

    void redisCluster()
    {
        QString error;
        QElapsedTimer timer;
        timer.start();
        auto cluster = RedisClusterTopology::start(&error);
        QVERIFY2(sayWhy(cluster != nullptr, error), qPrintable(error));
        const qint64 startMs = timer.elapsed();
        const QString folder = cluster->folder();
        QCOMPARE(reapersFor(folder), 1);
        const QStringList nodes = cluster->nodes();
        QCOMPARE(nodes.size(), 6);
        QList<int> ports;
        for (const QString &node : nodes) {
            QVERIFY2(node.startsWith(u"127.0.0.1:"), qPrintable(node));
            ports << node.section(u':', 1).toInt();
            QCOMPARE(cluster->cli(ports.constLast(), {u"ping"_s}), QByteArray("PONG"));
            QCOMPARE(cluster->cli(ports.constLast(), {u"CLUSTER"_s, u"INFO"_s}).split('\n').value(0).trimmed(),
                     QByteArray("cluster_state:ok"));
        }
        QCOMPARE(QSet<int>(ports.begin(), ports.end()).size(), 6);
        QList<qint64> pids = pidsInFolder(folder);
        QCOMPARE(pids.size(), 6);

        const QList<int> masters = cluster->masterPorts();
        QCOMPARE(masters.size(), 3);
        for (const int master : masters) {
            QVERIFY(ports.contains(master));
            QCOMPARE(cluster->cli(master, {u"ROLE"_s}).split('\n').value(0), QByteArray("master"));
        }
        // Through any node: redis-cli -c follows the MOVED redirections.
        for (int i = 0; i < 50; ++i) {
            QCOMPARE(
                cluster->cli(ports.at(i % ports.size()), {u"SET"_s, u"cluster-key-%1"_s.arg(i), QString::number(i)}),
                QByteArray("OK"));
        }
        // Replicated before the kill: the failover must not lose them.
        for (const int master : masters)
            QCOMPARE(cluster->cli(master, {u"WAIT"_s, u"1"_s, u"1000"_s}), QByteArray("1"));

        const QString key = u"cluster-key-7"_s;
        const int original = cluster->masterPortForKey(key);
        QVERIFY2(masters.contains(original), qPrintable(QString::number(original)));
        timer.restart();
        QVERIFY2(sayWhy(cluster->kill(original, &error), error), qPrintable(error));
        QVERIFY(portClosesSoon(original));
        const int promoted = cluster->waitForFailover(original, 30'000, &error);
        QVERIFY2(sayWhy(promoted > 0, error), qPrintable(error));
        const qint64 failoverMs = timer.elapsed();
        QVERIFY(promoted != original);
        QVERIFY(ports.contains(promoted));
        QVERIFY(!masters.contains(promoted)); // the killed master's replica
        QCOMPARE(cluster->masterPortForKey(key), promoted);
        QList<int> mastersNow = masters;
        mastersNow.removeOne(original);
        mastersNow << promoted;
        std::sort(mastersNow.begin(), mastersNow.end());
        QCOMPARE(cluster->masterPorts(), mastersNow);
        const int live = ports.at(ports.at(0) == original ? 1 : 0);
        QCOMPARE(cluster->cli(promoted, {u"GET"_s, key}), QByteArray("7"));
        for (int i = 0; i < 50; ++i)
            QCOMPARE(cluster->cli(live, {u"GET"_s, u"cluster-key-%1"_s.arg(i)}), QByteArray::number(i));

        timer.restart();
        QVERIFY2(sayWhy(cluster->restartKilled(original, 30'000, &error), error), qPrintable(error));
        const qint64 rejoinMs = timer.elapsed();
        QCOMPARE(cluster->cli(original, {u"ROLE"_s}).split('\n').value(0), QByteArray("slave"));
        QCOMPARE(cluster->masterPorts(), mastersNow);
        QCOMPARE(cluster->masterPortForKey(key), promoted);
        // Through the rejoined replica: redirected to the new master.
        QCOMPARE(cluster->cli(original, {u"GET"_s, key}), QByteArray("7"));
        QCOMPARE(cluster->cli(original, {u"SET"_s, u"after-rejoin"_s, u"1"_s}), QByteArray("OK"));
        QVERIFY2(!cluster->restartKilled(original, 1000, &error), "a second restart without a kill");
        qInfo("Redis Cluster ready in %lld ms (six nodes, cluster_state:ok everywhere, replicas "
              "in sync); failover %lld ms (SIGKILL of a master to every live node saying "
              "cluster_state:ok with its slots on the promoted replica); rejoin %lld ms (restart "
              "with its nodes.conf to a synced replica seen so by every node)",
              startMs, failoverMs, rejoinMs);
        QVERIFY(!cluster->logTail(5).isEmpty());

        pids = pidsInFolder(folder); // the restarted node has a new pid
        QCOMPARE(pids.size(), 6);
        cluster.reset();
        for (const qint64 pid : std::as_const(pids))
            QVERIFY2(!redisServerRunning(pid), qPrintable(u"redis-server %1 still runs"_s.arg(pid)));
        for (const int port : std::as_const(ports))
            QVERIFY2(portClosesSoon(port), qPrintable(u"port %1 still open"_s.arg(port)));
        verifyNothingLeft(original, folder);
    }

    /// Three masters only: a killed master is not failed over (waitForFailover says why) and
    /// restartKilled brings it back as the master of its slots.
    void redisClusterWithoutReplicas()
    {
        QString error;
        auto cluster = RedisClusterTopology::start({.replicasPerMaster = 0}, &error);
        QVERIFY2(sayWhy(cluster != nullptr, error), qPrintable(error));
        const QString folder = cluster->folder();
        QCOMPARE(cluster->nodes().size(), 3);
        const QList<int> masters = cluster->masterPorts();
        QCOMPARE(masters.size(), 3);
        const int victim = cluster->masterPortForKey(u"lonely"_s);
        QVERIFY(masters.contains(victim));
        QVERIFY2(sayWhy(cluster->kill(victim, &error), error), qPrintable(error));
        QCOMPARE(cluster->waitForFailover(victim, 3000, &error), -1);
        QVERIFY2(error.contains(u"cluster_state:fail"), qPrintable(error.left(2000)));
        QVERIFY2(cluster->restartKilled(victim, 30'000, &error), qPrintable(error));
        QCOMPARE(cluster->masterPorts(), masters);
        QCOMPARE(cluster->cli(victim, {u"SET"_s, u"lonely"_s, u"1"_s}), QByteArray("OK"));
        const QList<qint64> pids = pidsInFolder(folder);
        QCOMPARE(pids.size(), 3);
        cluster.reset();
        for (const qint64 pid : pids)
            QVERIFY2(!redisServerRunning(pid), qPrintable(u"redis-server %1 still runs"_s.arg(pid)));
        verifyNothingLeft(victim, folder);
    }

    void postgres()
    {
        QString error;
        QElapsedTimer timer;
        timer.start();
        auto server = PostgresServer::start(&error);
        QVERIFY2(server, qPrintable(error));
        qInfo("PostgreSQL ready in %lld ms (initdb, start, CREATE DATABASE)", timer.elapsed());
        const int port = server->port();
        const QString folder = server->folder();
        QCOMPARE(server->url(), u"postgresql://payonce:%1@127.0.0.1:%2/payonce"_s.arg(server->password()).arg(port));
        QCOMPARE(server->urlWithPassword(u"x"_s), u"postgresql://payonce:x@127.0.0.1:%1/payonce"_s.arg(port));

        const ClientResult one = psql(*server, server->password(), u"SELECT 1"_s);
        QVERIFY2(one.exitCode == 0, qPrintable(one.output));
        QCOMPARE(one.output, u"1"_s);

        const ClientResult wrong = psql(*server, u"not-the-password"_s, u"SELECT 1"_s);
        QVERIFY2(wrong.exitCode != 0, qPrintable(wrong.output));
        QVERIFY2(wrong.output.contains(u"password authentication failed"), qPrintable(wrong.output));

        const ClientResult created = psql(*server, server->password(),
                                          u"CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)"_s);
        QVERIFY2(created.exitCode == 0, qPrintable(created.output));
        QVERIFY(server->stop());
        QVERIFY(portClosesSoon(port));
        timer.restart();
        QVERIFY2(server->startAgain(&error), qPrintable(error));
        qInfo("PostgreSQL started again in %lld ms", timer.elapsed());
        QCOMPARE(server->port(), port);
        const ClientResult kept = psql(*server, server->password(), u"SELECT x FROM kept"_s);
        QVERIFY2(kept.exitCode == 0, qPrintable(kept.output));
        QCOMPARE(kept.output, u"42"_s);
        QVERIFY(server->logTail().contains(u"ready to accept connections"));

        server.reset();
        verifyNothingLeft(port, folder);
    }

    void mariadbServer()
    {
        QString error;
        QElapsedTimer timer;
        timer.start();
        auto server = MariaDbServer::start(&error);
        QVERIFY2(server, qPrintable(error));
        qInfo("MariaDB ready in %lld ms (install-db, start, CREATE USER)", timer.elapsed());
        const int port = server->port();
        const QString folder = server->folder();
        QCOMPARE(server->url(), u"mariadb://payonce:%1@127.0.0.1:%2/payonce"_s.arg(server->password()).arg(port));

        const ClientResult one = mariadb(*server, server->password(), u"SELECT 1"_s);
        QVERIFY2(one.exitCode == 0, qPrintable(one.output));
        QCOMPARE(one.output, u"1"_s);

        const ClientResult wrong = mariadb(*server, u"not-the-password"_s, u"SELECT 1"_s);
        QVERIFY2(wrong.exitCode != 0, qPrintable(wrong.output));
        QVERIFY2(wrong.output.contains(u"Access denied"), qPrintable(wrong.output));

        const ClientResult created = mariadb(*server, server->password(),
                                             u"CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)"_s);
        QVERIFY2(created.exitCode == 0, qPrintable(created.output));
        timer.restart();
        QVERIFY(server->stop());
        qInfo("MariaDB stopped in %lld ms", timer.elapsed());
        QVERIFY(portClosesSoon(port));
        timer.restart();
        QVERIFY2(server->startAgain(&error), qPrintable(error));
        qInfo("MariaDB started again in %lld ms", timer.elapsed());
        QCOMPARE(server->port(), port);
        const ClientResult kept = mariadb(*server, server->password(), u"SELECT x FROM kept"_s);
        QVERIFY2(kept.exitCode == 0, qPrintable(kept.output));
        QCOMPARE(kept.output, u"42"_s);

        server.reset();
        verifyNothingLeft(port, folder);
    }

    void testDatabase_data()
    {
        QTest::addColumn<Dialect>("dialect");
        QTest::newRow("sqlite") << Dialect::Sqlite;
        QTest::newRow("postgresql") << Dialect::PostgreSql;
        QTest::newRow("mariadb") << Dialect::MariaDb;
    }
    void testDatabase()
    {
        QFETCH(Dialect, dialect);
        QString error;
        auto database = TestDatabase::start(dialect, &error);
        QVERIFY2(database, qPrintable(error));
        QCOMPARE(database->dialect(), dialect);
        QString folder;
        int port = 0;
        switch (dialect) {
        case Dialect::Sqlite:
            QVERIFY(!database->postgres() && !database->mariadb());
            QVERIFY(database->url().startsWith(u"sqlite:/"));
            QVERIFY(database->url().endsWith(u"/payonce.db"));
            folder = QFileInfo(database->url().mid(7)).path(); // after "sqlite:"
            QVERIFY(QFileInfo(folder).isDir());
            break;
        case Dialect::PostgreSql:
            QVERIFY(database->postgres());
            QCOMPARE(database->url(), database->postgres()->url());
            folder = database->postgres()->folder();
            port = database->postgres()->port();
            break;
        case Dialect::MariaDb:
            QVERIFY(database->mariadb());
            QCOMPARE(database->url(), database->mariadb()->url());
            folder = database->mariadb()->folder();
            port = database->mariadb()->port();
            break;
        }
        QVERIFY2(database->restart(&error), qPrintable(error));
        if (port)
            QVERIFY(loopbackPortAcceptsConnections(port));
        database.reset();
        QVERIFY2(!QFileInfo::exists(folder), qPrintable(folder));
        if (port)
            QVERIFY(portClosesSoon(port));
    }

    void dialectNames()
    {
        QCOMPARE(dialectName(Dialect::Sqlite), u"sqlite"_s);
        QCOMPARE(dialectName(Dialect::PostgreSql), u"postgresql"_s);
        QCOMPARE(dialectName(Dialect::MariaDb), u"mariadb"_s);
    }

    void reaperCleansUpAfterSigkill()
    {
        QProcess child;
        child.setProgram(QStringLiteral(PAYONCE_HARNESS_CHILD));
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start();
        QVERIFY2(child.waitForStarted(), qPrintable(child.errorString()));

        struct Started {
            QString kind;
            int port;
            QString folder;
        };
        QList<Started> servers;
        QDeadlineTimer deadline(180'000);
        bool ready = false;
        while (!ready && !deadline.hasExpired()) {
            if (!child.canReadLine() && !child.waitForReadyRead(1000)) {
                if (child.state() == QProcess::NotRunning)
                    break;
                continue;
            }
            while (child.canReadLine()) {
                const QString line = QString::fromLocal8Bit(child.readLine()).trimmed();
                if (line == u"ready") {
                    ready = true;
                    break;
                }
                QVERIFY2(!line.startsWith(u"error"), qPrintable(line));
                const QStringList parts = line.split(u' ');
                QCOMPARE(parts.size(), 3);
                servers.append({parts[0], parts[1].toInt(), parts[2]});
            }
        }
        QVERIFY2(ready, "the child did not start its servers");
        // redis, postgres, mariadb; the Sentinel topology's five; the cluster's six
        QCOMPARE(servers.size(), 3 + 5 + 6);
        for (const Started &server : std::as_const(servers)) {
            QVERIFY2(loopbackPortAcceptsConnections(server.port), qPrintable(server.kind));
            QVERIFY2(QFileInfo(server.folder).isDir(), qPrintable(server.folder));
        }

        QVERIFY(::kill(static_cast<pid_t>(child.processId()), SIGKILL) == 0);
        QVERIFY(child.waitForFinished(10'000));
        QElapsedTimer timer;
        timer.start();
        for (const Started &server : std::as_const(servers)) {
            QTRY_VERIFY2_WITH_TIMEOUT(!loopbackPortAcceptsConnections(server.port) && !QFileInfo::exists(server.folder),
                                      qPrintable(server.kind + u" on port "_s + QString::number(server.port) + u" in "_s
                                                 + server.folder + u" is still there"_s),
                                      30'000);
        }
        qInfo("reapers cleaned up %lld ms after SIGKILL", timer.elapsed());
        for (const Started &server : std::as_const(servers)) {
            // The reaper's own `rm -rf` may still be exiting.
            QTRY_VERIFY2_WITH_TIMEOUT(processesMentioning(server.folder).isEmpty(),
                                      qPrintable(processesMentioning(server.folder).join(u'\n')), 5000);
            QTRY_COMPARE_WITH_TIMEOUT(reapersFor(server.folder), 0, 5000);
        }
    }
};

QTEST_GUILESS_MAIN(TestServerHarness)
#include "tst_serverharness.moc"
