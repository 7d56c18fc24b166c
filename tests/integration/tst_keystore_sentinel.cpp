// The key-store contract through Redis Sentinel (a master, a replica and three Sentinels
// from the harness), then what only Sentinel mode has: the master found through the
// Sentinels, a failover (the master SIGKILLed) and a failback (SENTINEL FAILOVER) followed
// by every connection, a replica never written to, and fencing tokens that grow across
// both (docs/design.md "Redis topologies"). A second topology has passwords on its nodes
// and on its Sentinels: the right ones work through a failover, a wrong one of either kind
// is Misconfigured and never shows in a message.

#include "rediskeystorecontract.h"
#include "verifyprinting.h"

#include "redis/rediskeystore.h"
#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <atomic>
#include <thread>

using namespace std::chrono_literals;
using namespace payonce;
using testsupport::RedisSentinelTopology;

namespace {

constexpr int kFailoverMs = 30000; // Sentinel: down-after 2 s, election, promotion; with room

quint64 epochOf(quint64 token)
{
    return token >> 32;
}

/// A stand-in Sentinel that names `masterPort` as the master of any name, on its own thread:
/// what a Sentinel that has not yet seen a failover answers.
class LyingSentinel {
public:
    explicit LyingSentinel(int masterPort) : m_masterPort(masterPort)
    {
        m_thread = std::thread([this] { run(); });
        while (m_port.load() == 0)
            std::this_thread::sleep_for(5ms);
    }
    ~LyingSentinel()
    {
        m_stop.store(true);
        m_thread.join();
    }
    int port() const { return m_port.load(); }

private:
    void run()
    {
        QTcpServer server;
        if (!server.listen(QHostAddress::LocalHost)) {
            m_port.store(-1);
            return;
        }
        m_port.store(server.serverPort());
        std::vector<std::unique_ptr<QTcpSocket>> clients;
        while (!m_stop.load()) {
            // waitForNewConnection() accepts every connection that is waiting, and only a
            // later one wakes it again: take them all, or one that came with another (the
            // store's +switch-master watcher and its first resolve) is never answered.
            server.waitForNewConnection(20);
            while (server.hasPendingConnections())
                clients.emplace_back(server.nextPendingConnection());
            for (auto &client : clients) {
                if (!client->waitForReadyRead(5))
                    continue;
                const QByteArray request = client->readAll();
                if (request.contains("get-master-addr-by-name")) {
                    const QByteArray port = QByteArray::number(m_masterPort);
                    client->write("*2\r\n$9\r\n127.0.0.1\r\n$" + QByteArray::number(port.size()) + "\r\n" + port
                                  + "\r\n");
                } else if (request.contains("SUBSCRIBE")) {
                    client->write("*3\r\n$9\r\nsubscribe\r\n$14\r\n+switch-master\r\n:1\r\n");
                } else {
                    client->write("+OK\r\n");
                }
                client->flush();
            }
        }
    }

    const int m_masterPort;
    std::atomic<int> m_port{0};
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

} // namespace

class TestKeyStoreSentinel : public tests::RedisKeyStoreContract {
    Q_OBJECT
protected:
    bool startRedis(QString *error) override
    {
        m_topology = RedisSentinelTopology::start(error);
        return m_topology != nullptr;
    }
    const char *redisDescription() const override { return "master, replica and 3 Sentinels"; }
    QString redisLogs() const override { return m_topology->logTail(); }
    redis::RedisOptions options() const override { return optionsFor(*m_topology); }

private Q_SLOTS:
    void masterIsFoundThroughTheSentinels()
    {
        QVERIFY(m_store->ping().ok());
        const core::KeyStoreTopology topology = m_store->topology();
        QCOMPARE(topology.mode, QStringLiteral("sentinel"));
        QCOMPARE(topology.master, QStringLiteral("127.0.0.1:%1").arg(m_topology->masterPort()));
        QVERIFY(topology.fenceEpoch >= 1);
        QCOMPARE(topology.masterSwitches, quint64(0));
        // The first Sentinel gone: the next one answers.
        redis::RedisOptions skipping = options();
        skipping.sentinels.prepend(config::HostPort{QStringLiteral("127.0.0.1"), testsupport::freeLoopbackPort()});
        redis::RedisKeyStore other(skipping, m_epochs);
        QVERIFY(waitUntilReachable(other, 15000));
        QCOMPARE(other.topology().master, topology.master);
    }

    void unknownMasterNameIsUnavailableWithWhatTheSentinelsSaid()
    {
        redis::RedisOptions wrong = options();
        wrong.masterName = QStringLiteral("no-such-master");
        redis::RedisKeyStore store(wrong, m_epochs);
        auto pinged = store.ping();
        QVERIFY(!pinged.ok());
        QCOMPARE(pinged.error().code, core::ErrorCode::Unavailable);
        QVERIFY2(pinged.error().internalMessage.contains(QLatin1String("does not know master \"no-such-master\"")),
                 qPrintable(pinged.error().internalMessage));
        QVERIFY(store.degraded());
    }

    // A Sentinel that still names the replica as master: the store asks the node (ROLE),
    // finds a replica and writes nothing to it — Unavailable, degraded.
    void aReplicaNamedAsMasterIsNotWrittenTo()
    {
        const QList<int> ports = m_topology->dataPorts();
        const int replica = ports.at(0) == m_topology->masterPort() ? ports.at(1) : ports.at(0);
        LyingSentinel liar(replica);
        QVERIFY(liar.port() > 0);
        redis::RedisOptions lied = options();
        lied.sentinels = {config::HostPort{QStringLiteral("127.0.0.1"), liar.port()}};
        redis::RedisKeyStore store(lied, m_epochs);
        const QString scope = uniqueKey("attempt");
        auto issued = store.tokens().issue(scope, 60s);
        QVERIFY(!issued.ok());
        QCOMPARE(issued.error().code, core::ErrorCode::Unavailable);
        QVERIFY2(issued.error().internalMessage.contains(QLatin1String("answers ROLE as slave")),
                 qPrintable(issued.error().internalMessage));
        QVERIFY(store.degraded());
        QCOMPARE(
            m_topology->cli(m_topology->masterPort(), {QStringLiteral("EXISTS"), QStringLiteral("token:") + scope}),
            QByteArray("0"));
    }

    // A second topology with a password on the data nodes (requirepass, masterauth) and
    // another on the Sentinels (requirepass, sentinel-pass; they monitor with auth-pass).
    void passwordsOnNodesAndSentinels()
    {
        const QString nodePassword = QStringLiteral("node-pw-7c41e9");
        const QString sentinelPassword = QStringLiteral("sentinel-pw-2f8d03");
        const QString wrongPassword = QStringLiteral("wrong-pw-5a6b17");
        const QStringList secrets{nodePassword, sentinelPassword, wrongPassword};
        const auto leaks = [&secrets](const QString &message) {
            for (const QString &secret : secrets) {
                if (message.contains(secret))
                    return true;
            }
            return false;
        };

        RedisSentinelTopology::Options protectedOptions;
        protectedOptions.password = nodePassword;
        protectedOptions.sentinelPassword = sentinelPassword;
        QString error;
        QElapsedTimer started;
        started.start();
        const auto topology = RedisSentinelTopology::start(protectedOptions, &error);
        QVERIFY2(topology, qPrintable(error));
        // Another Redis group, another fence_epochs: the first topology's epochs stay 1, 2, 3.
        testsupport::SqliteFenceEpochs epochs;
        qInfo("master, replica and 3 Sentinels, all with passwords, up in %lld ms", started.elapsed());

        // (a) The right passwords: tokens, a lock with its fencing token, the master named.
        redis::RedisOptions right = optionsFor(*topology);
        right.password = nodePassword;
        right.sentinelPassword = sentinelPassword;
        redis::RedisKeyStore store(right, epochs);
        PAYONCE_VERIFY_PRINTING(waitUntilReachable(store, 15000), topology->logTail());
        const auto works = [&store](const QString &when) {
            const QString scope = uniqueKey("attempt");
            auto issued = store.tokens().issue(scope, 60s);
            QVERIFY2(issued.ok(), qPrintable(when + (issued.ok() ? QString() : u' ' + describe(issued.error()))));
            auto consumed = store.tokens().consume(scope, issued.value());
            QVERIFY2(consumed.ok() && consumed.value(),
                     qPrintable(when + (consumed.ok() ? QString() : u' ' + describe(consumed.error()))));
            auto locked = store.locks().acquire(uniqueKey("lock:order"), 10s, uniqueKey("order"));
            QVERIFY2(locked.ok(), qPrintable(when + (locked.ok() ? QString() : u' ' + describe(locked.error()))));
            QVERIFY(locked.value());
            QVERIFY(locked.value()->fencingToken() > 0);
            auto released = locked.value()->release();
            QVERIFY(released.ok() && released.value());
        };
        works(QStringLiteral("with the right passwords:"));
        if (QTest::currentTestFailed())
            return;
        const int master = topology->masterPort();
        QCOMPARE(store.topology().master, QStringLiteral("127.0.0.1:%1").arg(master));
        QVERIFY(!store.degraded());

        // (b) A wrong Sentinel password: every Sentinel refuses the AUTH, so no master is
        // found. That is a misconfiguration, not an outage: Misconfigured (like a wrong
        // master password), with what each Sentinel said.
        {
            redis::RedisOptions wrongSentinel = right;
            wrongSentinel.sentinelPassword = wrongPassword;
            redis::RedisKeyStore wrong(wrongSentinel, epochs);
            auto pinged = wrong.ping();
            QVERIFY(!pinged.ok());
            const QString message = pinged.error().internalMessage;
            QVERIFY2(pinged.error().code == core::ErrorCode::Misconfigured, qPrintable(describe(pinged.error())));
            for (const QString &sentinel : topology->sentinels())
                QVERIFY2(message.contains(sentinel + QStringLiteral(": AUTH refused")), qPrintable(message));
            QVERIFY2(!leaks(message), qPrintable(message));
            QVERIFY(wrong.degraded());
            QVERIFY(wrong.topology().master.isEmpty());
            qInfo("a wrong Sentinel password: %s", qPrintable(describe(pinged.error())));
        }
        // No Sentinel password at all: every Sentinel answers NOAUTH — Misconfigured too.
        {
            redis::RedisOptions noSentinel = right;
            noSentinel.sentinelPassword.clear();
            redis::RedisKeyStore wrong(noSentinel, epochs);
            auto pinged = wrong.ping();
            QVERIFY(!pinged.ok());
            const QString message = pinged.error().internalMessage;
            QVERIFY2(pinged.error().code == core::ErrorCode::Misconfigured, qPrintable(describe(pinged.error())));
            for (const QString &sentinel : topology->sentinels())
                QVERIFY2(message.contains(sentinel + QStringLiteral(": NOAUTH")), qPrintable(message));
            QVERIFY2(!leaks(message), qPrintable(message));
        }

        // (c) The right Sentinel password, a wrong master password: the Sentinels name the
        // master, which refuses the AUTH — Misconfigured.
        {
            redis::RedisOptions wrongMaster = right;
            wrongMaster.password = wrongPassword;
            redis::RedisKeyStore wrong(wrongMaster, epochs);
            auto pinged = wrong.ping();
            QVERIFY(!pinged.ok());
            const QString message = pinged.error().internalMessage;
            QVERIFY2(pinged.error().code == core::ErrorCode::Misconfigured, qPrintable(describe(pinged.error())));
            QVERIFY2(message.contains(QStringLiteral("127.0.0.1:%1").arg(master)), qPrintable(message));
            QVERIFY2(message.contains(QLatin1String("rejected the password")), qPrintable(message));
            QVERIFY2(!leaks(message), qPrintable(message));
            QVERIFY(wrong.degraded());
            qInfo("a wrong master password: %s", qPrintable(describe(pinged.error())));
        }

        // (d) A failover: the replica (masterauth: in sync, promotable) takes over and the
        // store follows it through the Sentinels, passwords and all.
        QElapsedTimer failoverTimer;
        failoverTimer.start();
        const int oldMaster = topology->killMaster(&error);
        QVERIFY2(oldMaster == master, qPrintable(error));
        const int newMaster = topology->waitForFailover(oldMaster, kFailoverMs, &error);
        PAYONCE_VERIFY_PRINTING(newMaster > 0, error + u'\n' + topology->logTail());
        PAYONCE_VERIFY_PRINTING(waitUntilReachable(store, kFailoverMs), topology->logTail());
        qInfo("with passwords: failover to port %d in %lld ms", newMaster, failoverTimer.elapsed());
        works(QStringLiteral("after the failover:"));
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(store.topology().master, QStringLiteral("127.0.0.1:%1").arg(newMaster));
        QVERIFY(store.topology().masterSwitches >= 1);
        QVERIFY(!store.degraded());
    }

    // Last: it moves the master away and back. Tokens for one order taken before, between
    // and after carry strictly larger epochs; every call after the Sentinels agree goes to
    // the new master at once — the lock's acquire (never sent twice) included.
    void failoverAndFailbackKeepTokensGrowing()
    {
        const QString order = uniqueKey("order");
        auto before = m_store->locks().acquire(uniqueKey("lock:order"), 10s, order);
        QVERIFY(before.ok() && before.value());
        const quint64 tokenBefore = before.value()->fencingToken();
        QVERIFY(before.value()->release().ok());
        QVERIFY(m_second->ping().ok()); // the other agent's connection, to the old master too

        QString error;
        QElapsedTimer failoverTimer;
        failoverTimer.start();
        const int oldMaster = m_topology->killMaster(&error);
        QVERIFY2(oldMaster > 0, qPrintable(error));
        // While no master is elected calls fail fast, typed.
        auto during = m_store->fencing().next(order);
        if (!during.ok())
            QCOMPARE(during.error().code, core::ErrorCode::Unavailable);
        const int newMaster = m_topology->waitForFailover(oldMaster, kFailoverMs, &error);
        PAYONCE_VERIFY_PRINTING(newMaster > 0, error + u'\n' + m_topology->logTail());
        PAYONCE_VERIFY_PRINTING(waitUntilReachable(*m_store, kFailoverMs), m_topology->logTail());
        qInfo("failover to port %d in %lld ms", newMaster, failoverTimer.elapsed());

        auto afterFailover = m_second->locks().acquire(uniqueKey("lock:order"), 10s, order);
        QVERIFY2(afterFailover.ok(), afterFailover.ok() ? "" : qPrintable(describe(afterFailover.error())));
        QVERIFY(afterFailover.value());
        const quint64 tokenFailover = afterFailover.value()->fencingToken();
        QVERIFY(afterFailover.value()->release().ok());
        QVERIFY2(epochOf(tokenFailover) > epochOf(tokenBefore),
                 qPrintable(QStringLiteral("token %1 after %2").arg(tokenFailover).arg(tokenBefore)));
        QCOMPARE(m_store->topology().master, QStringLiteral("127.0.0.1:%1").arg(newMaster));
        QVERIFY(m_store->topology().masterSwitches >= 1);

        // Failback: the old node comes back (empty, a replica of the new master), then is
        // promoted again. The stores' connections go to the new master meanwhile.
        PAYONCE_VERIFY_PRINTING(m_topology->restartKilled(kFailoverMs, &error), error + u'\n' + m_topology->logTail());
        QVERIFY(m_store->ping().ok());
        QVERIFY(m_second->ping().ok());
        QElapsedTimer failbackTimer;
        failbackTimer.start();
        const int failedBack = m_topology->failover(kFailoverMs, &error);
        QCOMPARE(failedBack, oldMaster);
        qInfo("failback to port %d in %lld ms", failedBack, failbackTimer.elapsed());

        auto afterFailback = m_store->locks().acquire(uniqueKey("lock:order"), 10s, order);
        QVERIFY2(afterFailback.ok(), afterFailback.ok() ? "" : qPrintable(describe(afterFailback.error())));
        QVERIFY(afterFailback.value());
        const quint64 tokenFailback = afterFailback.value()->fencingToken();
        QVERIFY(afterFailback.value()->release().ok());
        QVERIFY2(epochOf(tokenFailback) > epochOf(tokenFailover),
                 qPrintable(QStringLiteral("token %1 after %2").arg(tokenFailback).arg(tokenFailover)));
        auto second = m_second->fencing().next(order);
        QVERIFY2(second.ok(), second.ok() ? "" : qPrintable(describe(second.error())));
        QVERIFY(second.value() > tokenFailback);
        QCOMPARE(m_store->topology().master, QStringLiteral("127.0.0.1:%1").arg(oldMaster));
        QVERIFY(m_store->topology().masterSwitches >= 2);
        QVERIFY(!m_store->degraded());
        qInfo("tokens for one order: %llu (epoch %llu), after the failover %llu (epoch %llu), after the failback %llu "
              "(epoch %llu)",
              tokenBefore, epochOf(tokenBefore), tokenFailover, epochOf(tokenFailover), tokenFailback,
              epochOf(tokenFailback));
    }

private:
    /// The store's options for `topology`, without passwords.
    static redis::RedisOptions optionsFor(const RedisSentinelTopology &topology)
    {
        redis::RedisOptions options;
        for (const QString &sentinel : topology.sentinels()) {
            auto parsed = config::HostPort::parse(sentinel);
            Q_ASSERT(parsed.ok());
            options.sentinels.append(parsed.value());
        }
        options.masterName = topology.masterName();
        options.connectTimeout = 1000ms;
        options.commandTimeout = 1000ms;
        return options;
    }

    std::unique_ptr<RedisSentinelTopology> m_topology;
};

QTEST_GUILESS_MAIN(TestKeyStoreSentinel)
#include "tst_keystore_sentinel.moc"
