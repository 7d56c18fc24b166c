// The key-store contract on Redis Cluster (three masters, each with a replica, from the
// harness), then what only cluster mode has: the slot map learned from one seed; a
// payment's lock and its fence state in one slot, on every master; one order's tokens
// drawing from one state whichever lock takes them; ASK during a slot's migration and
// MOVED after it; a master killed and failed over with the order's tokens still growing;
// and the key inspector finding a stuck lock on every master (docs/design.md "Redis
// topologies").

#include "rediskeystorecontract.h"
#include "verifyprinting.h"

#include "redis/hashslot.h"
#include "redis/rediskeystore.h"
#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QSet>
#include <QTest>

using namespace std::chrono_literals;
using namespace Qt::StringLiterals;
using namespace payonce;
using testsupport::RedisClusterTopology;

namespace {

constexpr int kFailoverMs = 30000; // cluster-node-timeout 1 s, the replica's election; with room

quint64 epochOf(quint64 token)
{
    return token >> 32;
}

QString tagged(int slot, const QString &rest)
{
    return u'{' + QString::fromLatin1(redis::tagForSlot(slot)) + u'}' + rest;
}

} // namespace

class TestKeyStoreCluster : public tests::RedisKeyStoreContract {
    Q_OBJECT
protected:
    bool startRedis(QString *error) override
    {
        m_cluster = RedisClusterTopology::start(error);
        return m_cluster != nullptr;
    }
    const char *redisDescription() const override { return "3 masters and 3 replicas"; }
    QString redisLogs() const override { return m_cluster->logTail(); }

    redis::RedisOptions options() const override
    {
        redis::RedisOptions options;
        for (const QString &node : m_cluster->nodes()) {
            auto parsed = config::HostPort::parse(node);
            Q_ASSERT(parsed.ok());
            options.clusterSeeds.append(parsed.value());
        }
        options.connectTimeout = 1000ms;
        options.commandTimeout = 1000ms;
        return options;
    }

private Q_SLOTS:
    void slotMapIsLearnedFromOneSeed()
    {
        redis::RedisOptions oneSeed = options();
        // The first seed does not answer: the next one does, and names every master.
        oneSeed.clusterSeeds = {config::HostPort{QStringLiteral("127.0.0.1"), testsupport::freeLoopbackPort()},
                                oneSeed.clusterSeeds.last()};
        redis::RedisKeyStore store(oneSeed, m_epochs);
        QVERIFY2(waitUntilReachable(store, 15000), "the store did not reach the cluster through its second seed");
        const core::KeyStoreTopology topology = store.topology();
        QCOMPARE(topology.mode, QStringLiteral("cluster"));
        QCOMPARE(topology.master, masterList());
        QCOMPARE(topology.masterSwitches, quint64(0));
    }

    // Locks of 300 orders: each lock and its slot's fence state sit on the master serving
    // the order's slot (one Lua script takes both), and the locks spread over every master.
    void locksAndFenceStateShareASlotOnEveryMaster()
    {
        QSet<int> mastersUsed;
        for (int i = 0; i < 300; ++i) {
            const QString order = uniqueKey("order");
            const QString payNo = uniqueKey("pay");
            auto locked = m_store->locks().acquire(QStringLiteral("lock:pay:") + payNo, 10s, order);
            QVERIFY2(locked.ok(), locked.ok() ? "" : qPrintable(describe(locked.error())));
            QVERIFY(locked.value());
            QVERIFY(locked.value()->fencingToken() > 0);
            const int slot = redis::hashSlot(order.toUtf8());
            const QString stored = tagged(slot, QStringLiteral("lock:pay:") + payNo);
            const int master = m_cluster->masterPortForKey(stored);
            QVERIFY(master > 0);
            QCOMPARE(m_cluster->masterPortForKey(tagged(slot, QString())), master);
            if (i % 50 == 0) { // the lock is where the slot map says, under the tagged name
                QCOMPARE(m_cluster->cli(master, {QStringLiteral("EXISTS"), stored}), QByteArray("1"));
                QCOMPARE(m_cluster->cli(master, {QStringLiteral("HEXISTS"),
                                                 QStringLiteral("fence:state:") + tagged(slot, QString()),
                                                 QStringLiteral("epoch")}),
                         QByteArray("1"));
            }
            mastersUsed.insert(master);
            QVERIFY(locked.value()->release().ok());
        }
        QCOMPARE(mastersUsed.size(), qsizetype(3));
    }

    // The confirm's lock (lock:order:<order>), the callback's (lock:pay:<pay_no>) and a
    // token without a lock, all for one order: one fence state, so each token is larger
    // than the one before, from either store.
    void oneOrdersTokensComeFromOneStateWhicheverLockTakesThem()
    {
        const QString order = uniqueKey("order");
        quint64 last = 0;
        for (int round = 0; round < 20; ++round) {
            core::KeyStore &store = round % 2 == 0 ? *m_store : *m_second;
            const QString key = round % 3 == 0 ? QStringLiteral("lock:order:") + order
                                               : QStringLiteral("lock:pay:") + uniqueKey("pay");
            auto locked = store.locks().acquire(key, 10s, order);
            QVERIFY2(locked.ok() && locked.value(), locked.ok() ? "held" : qPrintable(describe(locked.error())));
            const quint64 token = locked.value()->fencingToken();
            QVERIFY2(token > last,
                     qPrintable(QStringLiteral("round %1: token %2 after %3").arg(round).arg(token).arg(last)));
            last = token;
            QVERIFY(locked.value()->release().ok());
            auto next = store.fencing().next(order);
            QVERIFY2(next.ok(), next.ok() ? "" : qPrintable(describe(next.error())));
            QVERIFY(next.value() > last);
            last = next.value();
        }
    }

    // A slot moves from one master to another: while it migrates a key not yet on the
    // source is answered ASK (the store asks the target, once); once moved, MOVED (the
    // store's map learns the new owner). Both calls succeed.
    void askDuringAMigrationAndMovedAfterIt()
    {
        const QList<int> masters = m_cluster->masterPorts();
        QCOMPARE(masters.size(), qsizetype(3));
        const int source = masters.at(0);
        const int target = masters.at(1);
        const int slot = slotServedBy(source);
        QVERIFY(slot >= 0);
        auto mapped = m_store->ping(); // the map, before the move
        QVERIFY2(mapped.ok(), mapped.ok() ? "" : qPrintable(describe(mapped.error())));
        const QByteArray sourceId = m_cluster->cli(source, {QStringLiteral("CLUSTER"), QStringLiteral("MYID")});
        const QByteArray targetId = m_cluster->cli(target, {QStringLiteral("CLUSTER"), QStringLiteral("MYID")});
        const QString s = QString::number(slot);
        QCOMPARE(m_cluster->cli(target, {QStringLiteral("CLUSTER"), QStringLiteral("SETSLOT"), s,
                                         QStringLiteral("IMPORTING"), QString::fromLatin1(sourceId)}),
                 QByteArray("OK"));
        QCOMPARE(m_cluster->cli(source, {QStringLiteral("CLUSTER"), QStringLiteral("SETSLOT"), s,
                                         QStringLiteral("MIGRATING"), QString::fromLatin1(targetId)}),
                 QByteArray("OK"));

        const QString scope = tagged(slot, uniqueKey("attempt"));
        auto issued = m_store->tokens().issue(scope, 60s);
        QVERIFY2(issued.ok(), issued.ok() ? "" : qPrintable(describe(issued.error())));
        QCOMPARE(m_cluster->cli(target, {QStringLiteral("CLUSTER"), QStringLiteral("COUNTKEYSINSLOT"), s}),
                 QByteArray("1"));
        QCOMPARE(m_cluster->cli(source, {QStringLiteral("CLUSTER"), QStringLiteral("COUNTKEYSINSLOT"), s}),
                 QByteArray("0"));

        for (const int port : masters)
            QCOMPARE(m_cluster->cli(port, {QStringLiteral("CLUSTER"), QStringLiteral("SETSLOT"), s,
                                           QStringLiteral("NODE"), QString::fromLatin1(targetId)}),
                     QByteArray("OK"));
        QVERIFY(pollUntil([&] { return m_cluster->masterPortForKey(scope) == target; }, 10000));
        auto consumed = m_store->tokens().consume(scope, issued.value());
        QVERIFY2(consumed.ok(), consumed.ok() ? "" : qPrintable(describe(consumed.error())));
        QVERIFY(consumed.value());
        // The store learnt the move: the next call goes to the target directly.
        auto again = m_store->tokens().issue(scope, 60s);
        QVERIFY(again.ok());
        QCOMPARE(m_cluster->cli(target, {QStringLiteral("CLUSTER"), QStringLiteral("COUNTKEYSINSLOT"), s}),
                 QByteArray("1"));
        // The slot stays with the target: the later tests ask the cluster where a key is.
    }

    // The key inspector scans every master: a lock left with no expiry (a script that
    // failed half-way, a hand-written SET) is found on whichever master holds it, next to
    // the live locks of both stores with their time left.
    void inspectorFindsAStuckLockOnEveryMaster()
    {
        QMap<QString, int> stuckOn; // stored key -> master port
        for (const int master : m_cluster->masterPorts()) {
            const int slot = slotServedBy(master);
            QVERIFY(slot >= 0);
            const QString key = tagged(slot, QStringLiteral("lock:pay:") + uniqueKey("stuck"));
            QCOMPARE(m_cluster->cli(master, {QStringLiteral("SET"), key, QStringLiteral("owner-gone")}),
                     QByteArray("OK"));
            stuckOn.insert(key, master);
        }
        auto held = m_second->locks().acquire(QStringLiteral("lock:pay:") + uniqueKey("live"), 30s, uniqueKey("order"));
        QVERIFY(held.ok() && held.value());

        const core::StoredLockScan scan = m_store->scanLocks(1000);
        QVERIFY2(scan.failures.isEmpty(), qPrintable(scan.failures.join(u'\n')));
        QCOMPARE(scan.nodes.size(), qsizetype(3));
        int found = 0;
        bool liveFound = false;
        for (const core::StoredLock &lock : scan.locks) {
            if (stuckOn.contains(lock.storedKey)) {
                ++found;
                QCOMPARE(lock.node, QStringLiteral("127.0.0.1:%1").arg(stuckOn.value(lock.storedKey)));
                QCOMPARE(lock.ttlLeftMs, qint64(-1));
                QCOMPARE(lock.owner, QStringLiteral("owner-gone"));
                QVERIFY(lock.key.startsWith(QLatin1String("lock:pay:stuck")));
            }
            if (lock.key == held.value()->key()) {
                liveFound = true;
                QVERIFY(lock.ttlLeftMs > 0 && lock.ttlLeftMs <= 30000);
            }
        }
        QCOMPARE(found, 3);
        QVERIFY(liveFound);
        QVERIFY(held.value()->release().ok());
        for (auto it = stuckOn.cbegin(); it != stuckOn.cend(); ++it)
            m_cluster->cli(it.value(), {QStringLiteral("DEL"), it.key()});
    }

    // A cluster that lost a master no replica replaces refuses every key, on every node,
    // with CLUSTERDOWN (cluster-require-full-coverage, the default): the store is
    // unavailable — degraded, the payments go on without Redis — not failing with an
    // internal error; it recovers by itself once the master is back.
    void clusterDownIsUnavailable()
    {
        RedisClusterTopology::Options noReplicas;
        noReplicas.replicasPerMaster = 0;
        QString error;
        const auto cluster = RedisClusterTopology::start(noReplicas, &error);
        QVERIFY2(cluster, qPrintable(error));
        redis::RedisOptions options = this->options();
        options.clusterSeeds.clear();
        for (const QString &node : cluster->nodes())
            options.clusterSeeds.append(config::HostPort::parse(node).value());
        testsupport::SqliteFenceEpochs epochs;
        redis::RedisKeyStore store(options, epochs);
        QVERIFY(waitUntilReachable(store, 15000));
        const QList<int> masters = cluster->masterPorts();
        const int dead = masters.at(0);
        const int alive = masters.at(1);
        QString aliveScope;
        for (int slot = 11; aliveScope.isEmpty() && slot < redis::kClusterSlots; slot += 97) {
            if (cluster->masterPortForKey(tagged(slot, QString())) == alive)
                aliveScope = tagged(slot, uniqueKey("attempt"));
        }
        QVERIFY(!aliveScope.isEmpty());
        auto before = store.tokens().issue(aliveScope, 60s);
        QVERIFY2(before.ok(), before.ok() ? "" : qPrintable(describe(before.error())));

        QVERIFY2(cluster->kill(dead, &error), qPrintable(error));
        QVERIFY2(pollUntil(
                     [&] {
                         return cluster->cli(alive, {QStringLiteral("CLUSTER"), QStringLiteral("INFO")})
                             .contains("cluster_state:fail");
                     },
                     15000),
                 "the live master never saw the cluster fail");
        auto refused = store.tokens().issue(aliveScope, 60s);
        QVERIFY2(!refused.ok(), "a key on the live master was served while the cluster said fail");
        QVERIFY2(refused.error().code == core::ErrorCode::Unavailable, qPrintable(describe(refused.error())));
        QVERIFY2(refused.error().internalMessage.contains(QLatin1String("CLUSTERDOWN")),
                 qPrintable(refused.error().internalMessage));
        QVERIFY(store.degraded());

        PAYONCE_VERIFY_PRINTING(cluster->restartKilled(dead, kFailoverMs, &error), error + u'\n' + cluster->logTail());
        QVERIFY2(waitUntilReachable(store, kFailoverMs), "the store did not recover with the cluster");
        auto after = store.tokens().issue(aliveScope, 60s);
        QVERIFY2(after.ok(), after.ok() ? "" : qPrintable(describe(after.error())));
        QVERIFY(!store.degraded());
    }

    // Last: a master is SIGKILLed. While its replica is not yet promoted the order's calls
    // fail fast (Unavailable); afterwards they go to the promoted replica, whose copy of the
    // slot's state was installed by another process: a new epoch, larger than every token
    // before.
    void killedMasterFailsOverAndTokensKeepGrowing()
    {
        const QString order = uniqueKey("order");
        auto before = m_store->locks().acquire(QStringLiteral("lock:order:") + order, 10s, order);
        QVERIFY2(before.ok(), before.ok() ? "" : qPrintable(describe(before.error())));
        QVERIFY(before.value());
        const quint64 tokenBefore = before.value()->fencingToken();
        QVERIFY(before.value()->release().ok());
        const int victim = m_cluster->masterPortForKey(tagged(redis::hashSlot(order.toUtf8()), QString()));
        QVERIFY(victim > 0);
        QString other;
        for (int i = 0; other.isEmpty() && i < 1000; ++i) {
            const QString candidate = uniqueKey("order");
            if (m_cluster->masterPortForKey(tagged(redis::hashSlot(candidate.toUtf8()), QString())) != victim)
                other = candidate;
        }
        QVERIFY(!other.isEmpty());

        QString error;
        QElapsedTimer failover;
        failover.start();
        QVERIFY2(m_cluster->kill(victim, &error), qPrintable(error));
        QElapsedTimer call;
        call.start();
        auto during = m_store->fencing().next(order);
        if (!during.ok())
            QVERIFY2(during.error().code == core::ErrorCode::Unavailable, qPrintable(describe(during.error())));
        QVERIFY2(call.elapsed() < 5000, qPrintable(QStringLiteral("a call took %1 ms").arg(call.elapsed())));
        // Another master's slot works until the cluster marks the dead one failed (node
        // timeout 1 s); from then until the promotion the whole cluster answers CLUSTERDOWN
        // (cluster-require-full-coverage, the default): Unavailable too.
        auto elsewhere = m_store->fencing().next(other);
        if (!elsewhere.ok())
            QVERIFY2(elsewhere.error().code == core::ErrorCode::Unavailable
                         && elsewhere.error().internalMessage.contains(QLatin1String("CLUSTERDOWN")),
                     qPrintable(describe(elsewhere.error())));

        const int promoted = m_cluster->waitForFailover(victim, kFailoverMs, &error);
        PAYONCE_VERIFY_PRINTING(promoted > 0, error + u'\n' + m_cluster->logTail());
        qInfo("master %d killed, %d promoted after %lld ms", victim, promoted, failover.elapsed());
        quint64 tokenAfter = 0;
        QString lastRefusal;
        PAYONCE_VERIFY_PRINTING(
            pollUntil(
                [&] {
                    auto locked = m_second->locks().acquire(QStringLiteral("lock:pay:") + uniqueKey("pay"), 10s, order);
                    if (!locked.ok() || !locked.value()) {
                        lastRefusal = locked.ok() ? QStringLiteral("held by another") : describe(locked.error());
                        return false;
                    }
                    tokenAfter = locked.value()->fencingToken();
                    (void)locked.value()->release();
                    return true;
                },
                kFailoverMs),
            u"no lock after the failover; the last refusal: "_s + lastRefusal + u'\n' + m_cluster->logTail());
        QVERIFY2(epochOf(tokenAfter) > epochOf(tokenBefore),
                 qPrintable(QStringLiteral("token %1 after %2").arg(tokenAfter).arg(tokenBefore)));
        // The store that met the dead master learns the promoted one: its ping asks the map
        // again when a master does not answer.
        auto pinged = m_store->ping();
        QVERIFY2(pinged.ok(), pinged.ok() ? "" : qPrintable(describe(pinged.error())));
        const core::KeyStoreTopology topology = m_store->topology();
        const QString seen = QStringLiteral("masters %1, %2 switch(es); killed %3, promoted %4")
                                 .arg(topology.master)
                                 .arg(topology.masterSwitches)
                                 .arg(victim)
                                 .arg(promoted);
        QVERIFY2(topology.master.contains(QStringLiteral("127.0.0.1:%1").arg(promoted)), qPrintable(seen));
        QVERIFY2(topology.masterSwitches >= 1, qPrintable(seen));
        QVERIFY2(!topology.master.contains(QStringLiteral("127.0.0.1:%1").arg(victim)), qPrintable(seen));
        qInfo("tokens for one order: %llu (epoch %llu), after the failover %llu (epoch %llu)", tokenBefore,
              epochOf(tokenBefore), tokenAfter, epochOf(tokenAfter));
        PAYONCE_VERIFY_PRINTING(m_cluster->restartKilled(victim, kFailoverMs, &error),
                                error + u'\n' + m_cluster->logTail());
    }

private:
    QString masterList() const
    {
        QStringList masters;
        for (const int port : m_cluster->masterPorts())
            masters << QStringLiteral("127.0.0.1:%1").arg(port);
        return masters.join(u',');
    }

    /// A slot the master on `port` serves now; -1 if none found.
    int slotServedBy(int port) const
    {
        for (int slot = 7; slot < redis::kClusterSlots; slot += 331) {
            if (m_cluster->masterPortForKey(tagged(slot, QString())) == port)
                return slot;
        }
        return -1;
    }

    static bool pollUntil(const std::function<bool()> &done, int timeoutMs)
    {
        QElapsedTimer waited;
        waited.start();
        while (!done()) {
            if (waited.elapsed() > timeoutMs)
                return false;
            QTest::qWait(50);
        }
        return true;
    }

    std::unique_ptr<RedisClusterTopology> m_cluster;
};

QTEST_GUILESS_MAIN(TestKeyStoreCluster)
#include "tst_keystore_cluster.moc"
