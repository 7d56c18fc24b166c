#include "rediskeystorecontract.h"

#include "redis/keystorefactory.h"
#include "redis/rediskeystore.h"
#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTest>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace payonce;
using testsupport::RedisServer;

namespace {

constexpr auto ConnectTimeout = 1000ms;
constexpr auto CommandTimeout = 1000ms;
// "Within the timeout", with slack for a shared, noisy machine.
constexpr qint64 FailFastBoundMs = (ConnectTimeout + CommandTimeout).count() + 3000;

redis::RedisOptions optionsFor(const QString &url)
{
    auto parsed = redis::RedisOptions::fromUrl(url);
    Q_ASSERT(parsed.ok());
    redis::RedisOptions options = parsed.value();
    options.connectTimeout = ConnectTimeout;
    options.commandTimeout = CommandTimeout;
    return options;
}

/// Runs redis-cli against the test server; its trimmed standard output.
QByteArray redisCli(int port, const QStringList &args)
{
    QProcess cli;
    cli.start(QStringLiteral("redis-cli"), QStringList{QStringLiteral("-p"), QString::number(port)} + args);
    if (!cli.waitForFinished(10000))
        return QByteArrayLiteral("(redis-cli did not finish)");
    return cli.readAllStandardOutput().trimmed();
}

/// A FenceEpochSource in front of the real one whose new epochs for one instance id can be
/// held (a slow database round trip), so an interleaving of agents is deterministic. A
/// held call waits until release() or 10 s, whichever comes first.
class HeldEpochs final : public core::FenceEpochSource {
public:
    explicit HeldEpochs(core::FenceEpochSource &real) : m_real(real) {}

    void holdLookupsOf(const QString &instanceId)
    {
        std::lock_guard lock(m_mutex);
        m_heldId = instanceId;
    }
    void release()
    {
        {
            std::lock_guard lock(m_mutex);
            m_released = true;
        }
        m_changed.notify_all();
    }
    /// Waits until a lookup is being held or `done` turns true (up to 10 s).
    bool waitUntilHeldOr(const std::atomic<bool> &done)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, 10s, [&] { return m_holding || done.load(); });
    }
    bool heldALookup() const
    {
        std::lock_guard lock(m_mutex);
        return m_heldOnce;
    }

    core::Result<quint32> largestEpoch() override { return m_real.largestEpoch(); }
    core::Result<quint32> newEpoch(const QString &instanceId, const QString &reason) override
    {
        {
            std::unique_lock lock(m_mutex);
            if (!m_heldId.isEmpty() && instanceId == m_heldId && !m_released) {
                m_holding = m_heldOnce = true;
                m_changed.notify_all();
                m_changed.wait_for(lock, 10s, [&] { return m_released; });
                m_holding = false;
            }
        }
        return m_real.newEpoch(instanceId, reason);
    }

    /// Wakes waitUntilHeldOr() when a flag it watches changed.
    void poke()
    {
        {
            std::lock_guard lock(m_mutex);
        } // no lost wake-up between the check and the wait
        m_changed.notify_all();
    }

private:
    core::FenceEpochSource &m_real;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    QString m_heldId;
    bool m_released = false;
    bool m_holding = false;
    bool m_heldOnce = false;
};

} // namespace

/// The key-store contract on a real redis-server started by the test harness (two
/// stores on it: two agents), plus what only Redis has: a server killed and restarted
/// empty, passwords, the script cache flushed.
class TestKeyStoreRedis : public tests::RedisKeyStoreContract {
    Q_OBJECT
protected:
    bool startRedis(QString *error) override
    {
        m_server = RedisServer::start(error);
        return m_server != nullptr;
    }
    const char *redisDescription() const override { return "redis-server"; }
    QString redisLogs() const override { return m_server->logTail(); }
    redis::RedisOptions options() const override { return optionsFor(m_server->url()); }

private Q_SLOTS:
    void fencingSurvivesRestartEmpty()
    {
        const QString order = uniqueKey("order");
        const QString key = uniqueKey("lock:order");
        auto before = m_store->locks().acquire(key, 10s, order);
        QVERIFY2(before.ok(), before.ok() ? "" : qPrintable(describe(before.error())));
        QVERIFY(before.value());
        const quint64 tokenBefore = before.value()->fencingToken();
        auto released = before.value()->release();
        QVERIFY(released.ok());
        for (int i = 0; i < 50; ++i) // push the counter well above what a restart starts from
            QVERIFY(m_store->fencing().next(order).ok());
        auto high = m_store->fencing().next(order);
        QVERIFY(high.ok());
        const QString runIdBefore = m_store->instanceId();

        QVERIFY(m_server->kill());
        QString error;
        QVERIFY2(m_server->startAgain(&error), qPrintable(error));
        QVERIFY2(waitUntilReachable(*m_store, 15000), "the store did not recover after the restart");

        QVERIFY(m_store->instanceId() != runIdBefore);
        auto after = m_second->locks().acquire(key, 10s, order); // the other agent, too
        QVERIFY2(after.ok(), after.ok() ? "" : qPrintable(describe(after.error())));
        QVERIFY(after.value());
        const quint64 tokenAfter = after.value()->fencingToken();
        QVERIFY2((tokenAfter & 0xFFFFFFFFULL) == 1, "the server came back empty: the counter restarts");
        QVERIFY2(
            tokenAfter > high.value(),
            qPrintable(QStringLiteral("token %1 after %2: fencing went backwards").arg(tokenAfter).arg(high.value())));
        QVERIFY(tokenAfter > tokenBefore);
        QVERIFY((tokenAfter >> 32) > (tokenBefore >> 32));
        QVERIFY(after.value()->release().ok());
    }

    void fenceEpochIsRegisteredBeforeTheFirstIncr()
    {
        // Agent 1 takes a fencing token on instance A while the database is slow to hand out
        // epochs for A. Meanwhile A dies, B starts empty, agent 2 takes tokens on B. An epoch
        // paired with A's counter after B's was handed out would make A's (older) tokens
        // outrank every token B will ever give; the epoch is read from A in the same script
        // as the counter, installed there before, so no lookup stands between them.
        QString error;
        auto server = RedisServer::start(&error); // its own: A's run_id is new to the database
        QVERIFY2(server, qPrintable(error));
        HeldEpochs epochs(m_epochs);
        redis::RedisKeyStore agent1(optionsFor(server->url()), epochs);
        redis::RedisKeyStore agent2(optionsFor(server->url()), epochs);
        QVERIFY(waitUntilReachable(agent1, 15000));
        QVERIFY(waitUntilReachable(agent2, 15000));
        const QString instanceA = agent1.instanceId();
        QVERIFY(!instanceA.isEmpty());
        epochs.holdLookupsOf(instanceA);

        const QString order = uniqueKey("order");
        std::atomic<bool> agent1Done{false};
        core::Result<quint64> onA = quint64(0);
        std::thread first([&] {
            onA = agent1.fencing().next(order);
            agent1Done.store(true);
            epochs.poke();
        });
        auto joinFirst = qScopeGuard([&] {
            epochs.release();
            first.join();
        });
        QVERIFY(epochs.waitUntilHeldOr(agent1Done));

        QVERIFY(server->kill());
        QVERIFY2(server->startAgain(&error), qPrintable(error));
        QVERIFY(waitUntilReachable(agent2, 15000));
        QVERIFY(agent2.instanceId() != instanceA);
        auto onB = agent2.fencing().next(order);
        QVERIFY2(onB.ok(), onB.ok() ? "" : qPrintable(describe(onB.error())));

        joinFirst.dismiss();
        epochs.release();
        first.join();
        QVERIFY2(onA.ok(), onA.ok() ? "" : qPrintable(describe(onA.error())));
        qInfo("agent 1 on A: %llx (epoch lookup held: %s), agent 2 on B: %llx",
              static_cast<unsigned long long>(onA.value()), epochs.heldALookup() ? "yes" : "no",
              static_cast<unsigned long long>(onB.value()));
        QVERIFY2(onB.value() > onA.value(),
                 qPrintable(QStringLiteral("a token from the dead instance A (%1) outranks the new "
                                           "instance B's (%2): fencing went backwards for good")
                                .arg(onA.value(), 0, 16)
                                .arg(onB.value(), 0, 16)));
    }

    void failbackToAnOlderInstanceNeverReusesItsEpoch()
    {
        // The agents' endpoint fails over from A to B and back to A, which never restarted:
        // its run_id and its fence counters are the ones it had. B's tokens were taken with
        // a larger epoch than A's, so A's old epoch must not come back.
        QString error;
        auto a = RedisServer::start(&error);
        QVERIFY2(a, qPrintable(error));
        auto b = RedisServer::start(&error);
        QVERIFY2(b, qPrintable(error));
        redis::RedisKeyStore agent1(optionsFor(a->url()), m_epochs);
        redis::RedisKeyStore agent2(optionsFor(a->url()), m_epochs);
        QVERIFY(waitUntilReachable(agent1, 15000));
        QVERIFY(waitUntilReachable(agent2, 15000));
        const QString runIdA = agent1.instanceId();
        const QString order = uniqueKey("order");
        std::vector<quint64> tokens;
        auto take = [&](redis::RedisKeyStore &agent, int n) {
            for (int i = 0; i < n; ++i) {
                auto lock = agent.locks().acquire(uniqueKey("lock:order"), 10s, order);
                QVERIFY2(lock.ok(), lock.ok() ? "" : qPrintable(describe(lock.error())));
                QVERIFY(lock.value());
                tokens.push_back(lock.value()->fencingToken());
                QVERIFY(lock.value()->release().ok());
                auto next = agent.fencing().next(order);
                QVERIFY2(next.ok(), next.ok() ? "" : qPrintable(describe(next.error())));
                tokens.push_back(next.value());
            }
        };
        take(agent1, 5);
        take(agent2, 5);

        QVERIFY2(testsupport::takeOverEndpoint(*a, *b, &error), qPrintable(error));
        QVERIFY(waitUntilReachable(agent1, 15000));
        QVERIFY(waitUntilReachable(agent2, 15000));
        QVERIFY(agent1.instanceId() != runIdA);
        take(agent1, 2);

        QVERIFY2(testsupport::takeOverEndpoint(*b, *a, &error), qPrintable(error));
        QVERIFY(waitUntilReachable(agent1, 15000));
        QVERIFY(waitUntilReachable(agent2, 15000));
        QCOMPARE(agent1.instanceId(), runIdA);
        take(agent2, 2);
        take(agent1, 2);

        for (size_t i = 1; i < tokens.size(); ++i)
            QVERIFY2(tokens[i] > tokens[i - 1], qPrintable(QStringLiteral("token %1 is %2:%3 after %4:%5")
                                                               .arg(i)
                                                               .arg(tokens[i] >> 32)
                                                               .arg(tokens[i] & 0xFFFFFFFF)
                                                               .arg(tokens[i - 1] >> 32)
                                                               .arg(tokens[i - 1] & 0xFFFFFFFF)));
    }

    // An entry another agent wrote before the seen set kept what the payment was ("1"):
    // processed, its content unknown — the callback path then reads the order as before.
    void seenEntryWithoutItsPaymentIsProcessedWithoutContent()
    {
        const QString payNo = uniqueKey("4200000002");
        const QByteArray set = m_server->cli({QStringLiteral("SET"), QStringLiteral("seen:wechat:") + payNo,
                                              QStringLiteral("1"), QStringLiteral("PX"), QStringLiteral("60000")});
        QVERIFY2(set.trimmed() == "OK", set.constData());
        auto seen = m_store->seenProcessed().seen(QStringLiteral("wechat"), payNo);
        QVERIFY2(seen.ok(), seen.ok() ? "" : qPrintable(describe(seen.error())));
        QVERIFY(seen.value().processed);
        QVERIFY(!seen.value().payment);
    }

    void lostFenceKeysNeverRestartTheCounter()
    {
        // The fence keys are deleted (an operator's DEL, a FLUSHDB, an eviction) on the same
        // instance, while both agents keep their connections: no handshake sees it.
        const QString order = uniqueKey("order");
        quint64 last = 0;
        for (int i = 0; i < 20; ++i) {
            auto token = (i % 2 ? *m_second : *m_store).fencing().next(order);
            QVERIFY2(token.ok(), token.ok() ? "" : qPrintable(describe(token.error())));
            last = token.value();
        }
        const QByteArray deleted = m_server->cli(
            {QStringLiteral("EVAL"),
             QStringLiteral("local n = 0 for _, k in ipairs(redis.call('KEYS', 'fence:*')) do "
                            "redis.call('DEL', k) n = n + 1 end return n"),
             QStringLiteral("0")});
        QVERIFY2(deleted.toInt() > 0, deleted.constData());
        for (redis::RedisKeyStore *agent : {m_store.get(), m_second.get()}) {
            auto lock = agent->locks().acquire(uniqueKey("lock:order"), 10s, order);
            QVERIFY2(lock.ok(), lock.ok() ? "" : qPrintable(describe(lock.error())));
            QVERIFY(lock.value());
            const quint64 token = lock.value()->fencingToken();
            QVERIFY2(token > last, qPrintable(QStringLiteral("token %1:%2 after %3:%4: the counter restarted")
                                                  .arg(token >> 32)
                                                  .arg(token & 0xFFFFFFFF)
                                                  .arg(last >> 32)
                                                  .arg(last & 0xFFFFFFFF)));
            last = token;
            QVERIFY(lock.value()->release().ok());
            auto next = agent->fencing().next(order);
            QVERIFY2(next.ok(), next.ok() ? "" : qPrintable(describe(next.error())));
            QVERIFY(next.value() > last);
            last = next.value();
        }
    }

    void untrustedFenceStateTakesANewEpoch_data()
    {
        // What the instance's fence:state is turned into, and whether the agents reconnect
        // (a handshake) before their next token.
        QTest::addColumn<QStringList>("change");
        QTest::addColumn<bool>("reconnect");
        QTest::newRow("counter full") << QStringList{QStringLiteral("counter"), QStringLiteral("4294967295")} << false;
        // Restored from an older snapshot with the same run_id and epoch: the counter went
        // back below a token this agent already has.
        QTest::newRow("counter went back") << QStringList{QStringLiteral("counter"), QStringLiteral("1")} << false;
        // Restored from disk or replicated: written by another process.
        QTest::newRow("another run_id") << QStringList{QStringLiteral("run_id"), QStringLiteral("0123abcd")} << true;
    }

    void untrustedFenceStateTakesANewEpoch()
    {
        QFETCH(QStringList, change);
        QFETCH(bool, reconnect);
        const QString order = uniqueKey("order");
        quint64 last = 0;
        for (int i = 0; i < 5; ++i) {
            auto token = m_store->fencing().next(order);
            QVERIFY2(token.ok(), token.ok() ? "" : qPrintable(describe(token.error())));
            last = token.value();
        }
        QCOMPARE(m_server->cli(QStringList{QStringLiteral("HSET"), QStringLiteral("fence:state")} + change),
                 QByteArrayLiteral("0"));
        if (reconnect)
            QVERIFY(!m_server
                         ->cli({QStringLiteral("CLIENT"), QStringLiteral("KILL"), QStringLiteral("TYPE"),
                                QStringLiteral("normal")})
                         .isEmpty());
        QVERIFY(waitUntilReachable(*m_store, 15000));
        auto lock = m_store->locks().acquire(uniqueKey("lock:order"), 10s, order);
        QVERIFY2(lock.ok(), lock.ok() ? "" : qPrintable(describe(lock.error())));
        QVERIFY(lock.value());
        const quint64 token = lock.value()->fencingToken();
        QVERIFY2((token >> 32) > (last >> 32), qPrintable(QStringLiteral("token %1:%2 after %3:%4: no new epoch")
                                                              .arg(token >> 32)
                                                              .arg(token & 0xFFFFFFFF)
                                                              .arg(last >> 32)
                                                              .arg(last & 0xFFFFFFFF)));
        QCOMPARE(token & 0xFFFFFFFF, quint64(1));
        QVERIFY(lock.value()->release().ok());
        auto next = m_second->fencing().next(order); // the other agent continues in the new epoch
        QVERIFY2(next.ok(), next.ok() ? "" : qPrintable(describe(next.error())));
        QVERIFY(next.value() > token);
    }

    void epochLookupFailureFailsTheConnect()
    {
        // No epoch, no connection: a connection that could run an INCR without a
        // registered epoch is what the previous test is about.
        struct NoEpochs final : core::FenceEpochSource {
            core::Result<quint32> newEpoch(const QString &, const QString &) override { return down(); }
            core::Result<quint32> largestEpoch() override { return down(); }
            static core::Error down()
            {
                return core::Error::make(core::ErrorCode::Internal, QStringLiteral("database is down"),
                                         QStringLiteral("internal error"));
            }
        } noEpochs;
        redis::RedisKeyStore store(optionsFor(m_server->url()), noEpochs);
        auto token = store.tokens().issue(uniqueKey("attempt"), 10s);
        QVERIFY(!token.ok());
        QCOMPARE(token.error().code, core::ErrorCode::Unavailable);
        QVERIFY2(token.error().internalMessage.contains(QLatin1String("database is down")),
                 qPrintable(token.error().internalMessage));
        QVERIFY(store.degraded());
    }

    void pausedHolderDoesNotOutrankItsSuccessor()
    {
        // A holder pauses (GC, SIGSTOP) right after winning the lock, past its ttl. A
        // successor takes the lock and its token meanwhile (and writes with it). When the
        // paused holder wakes, its token must be below the successor's: taken with the
        // lock, not afterwards in a round trip of its own.
        const auto ttl = 3000ms;
        const QString key = uniqueKey("lock:order");
        const QString order = uniqueKey("order");
        std::unique_ptr<core::LockHandle> successor;
        QString successorError;
        m_store->setLockWonHookForTest([&] {
            QElapsedTimer waited;
            waited.start();
            while (!successor && waited.elapsed() < 15000) {
                auto attempt = m_second->locks().acquire(key, 10s, order);
                if (!attempt.ok()) {
                    successorError = describe(attempt.error());
                    return;
                }
                successor = std::move(attempt).value();
                if (!successor)
                    QTest::qSleep(20);
            }
        });
        auto paused = m_store->locks().acquire(key, ttl, order);
        m_store->setLockWonHookForTest({});
        QVERIFY2(paused.ok(), paused.ok() ? "" : qPrintable(describe(paused.error())));
        QVERIFY(paused.value());
        QVERIFY2(successor,
                 successorError.isEmpty() ? "the paused holder's lock did not expire" : qPrintable(successorError));
        QVERIFY2(paused.value()->lost(), "the paused holder must know its lease ran out");
        QVERIFY2(successor->fencingToken() > paused.value()->fencingToken(),
                 qPrintable(QStringLiteral("successor's token %1, paused holder's %2: the late "
                                           "holder's writes would win")
                                .arg(successor->fencingToken(), 0, 16)
                                .arg(paused.value()->fencingToken(), 0, 16)));
        QVERIFY(successor->release().ok());
    }

    void errorRepliesThatMeanUnavailableMarkDegraded()
    {
        // The server answers, but refuses: OOM here (LOADING, READONLY, MASTERDOWN alike).
        // That is Unavailable, so the store is degraded until a command succeeds again.
        const int port = m_server->port();
        QVERIFY(m_store->ping().ok());
        QVERIFY(!m_store->degraded());
        QCOMPARE(redisCli(port, {QStringLiteral("CONFIG"), QStringLiteral("SET"), QStringLiteral("maxmemory"),
                                 QStringLiteral("1")}),
                 QByteArrayLiteral("OK"));
        auto restore = qScopeGuard([port] {
            redisCli(port, {QStringLiteral("CONFIG"), QStringLiteral("SET"), QStringLiteral("maxmemory"),
                            QStringLiteral("0")});
        });
        auto refused = m_store->tokens().issue(uniqueKey("attempt"), 10s);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, core::ErrorCode::Unavailable);
        QVERIFY2(refused.error().internalMessage.contains(QLatin1String("OOM")),
                 qPrintable(refused.error().internalMessage));
        QVERIFY2(m_store->degraded(), "an OOM refusal must mark the store degraded");
        auto lock = m_store->locks().acquire(uniqueKey("lock:order"), 10s, uniqueKey("order"));
        QVERIFY(!lock.ok());
        QCOMPARE(lock.error().code, core::ErrorCode::Unavailable);
        QVERIFY(m_store->degraded());

        restore.dismiss();
        QCOMPARE(redisCli(port, {QStringLiteral("CONFIG"), QStringLiteral("SET"), QStringLiteral("maxmemory"),
                                 QStringLiteral("0")}),
                 QByteArrayLiteral("OK"));
        auto accepted = m_store->tokens().issue(uniqueKey("attempt"), 10s);
        QVERIFY2(accepted.ok(), accepted.ok() ? "" : qPrintable(describe(accepted.error())));
        QVERIFY2(!m_store->degraded(), "a successful reply clears degraded");
    }

    void lockTtlBelowThreeCommandTimeoutsIsRefused()
    {
        // One hung renewal blocks the store's single watchdog thread for a command
        // timeout: a ttl shorter than 3 command timeouts could run out meanwhile.
        const auto shortest = 3 * CommandTimeout;
        auto tooShort = m_store->locks().acquire(uniqueKey("lock:order"), shortest - 1ms, uniqueKey("order"));
        QVERIFY2(!tooShort.ok(), "a ttl below 3 x the command timeout must be refused");
        QCOMPARE(tooShort.error().code, core::ErrorCode::InvalidInput);
        QVERIFY2(tooShort.error().internalMessage.contains(QLatin1String("command timeout")),
                 qPrintable(tooShort.error().internalMessage));
        auto enough = m_store->locks().acquire(uniqueKey("lock:order"), shortest, uniqueKey("order"));
        QVERIFY2(enough.ok(), enough.ok() ? "" : qPrintable(describe(enough.error())));
        QVERIFY(enough.value());
        QVERIFY(enough.value()->release().ok());
    }

    void evictingMaxmemoryPolicyIsWarnedAbout()
    {
        // Locks and one-time tokens must not be evicted (an evicted fence state is detected
        // and gets a new epoch). The handshake says so (a warning, not a failure) when the
        // policy is not noeviction.
        const int port = m_server->port();
        const auto policyIs = [port](const char *policy) {
            return redisCli(port, {QStringLiteral("CONFIG"), QStringLiteral("SET"), QStringLiteral("maxmemory-policy"),
                                   QLatin1String(policy)});
        };
        const QRegularExpression warning(QStringLiteral("maxmemory-policy is allkeys-lru"));
        {
            QTest::failOnWarning(warning);
            redis::RedisKeyStore quiet(optionsFor(m_server->url()), m_epochs);
            QVERIFY(quiet.ping().ok()); // noeviction, the server's default: no warning
        }
        QCOMPARE(policyIs("allkeys-lru"), QByteArrayLiteral("OK"));
        auto restore = qScopeGuard([&] { policyIs("noeviction"); });
        QTest::ignoreMessage(QtWarningMsg, warning);
        redis::RedisKeyStore warned(optionsFor(m_server->url()), m_epochs);
        auto pinged = warned.ping();
        QVERIFY2(pinged.ok(), pinged.ok() ? "" : qPrintable(describe(pinged.error())));
        QVERIFY(!warned.degraded());
    }

    void refusedConfigCommandIsIgnored()
    {
        // CONFIG may be forbidden to the agent's user (ACL) or renamed: the check is
        // skipped, the connection is fine.
        const int port = m_server->port();
        QCOMPARE(redisCli(port, {QStringLiteral("ACL"), QStringLiteral("SETUSER"), QStringLiteral("noconfig"),
                                 QStringLiteral("on"), QStringLiteral(">noconfig-pass"), QStringLiteral("~*"),
                                 QStringLiteral("&*"), QStringLiteral("+@all"), QStringLiteral("-config")}),
                 QByteArrayLiteral("OK"));
        const QString url = QStringLiteral("redis://noconfig:noconfig-pass@127.0.0.1:%1/0").arg(port);
        redis::RedisKeyStore limited(optionsFor(url), m_epochs);
        auto token = limited.tokens().issue(uniqueKey("attempt"), 10s);
        QVERIFY2(token.ok(), token.ok() ? "" : qPrintable(describe(token.error())));
        QVERIFY(!limited.degraded());
    }

    void killedServerMidTestGivesTypedErrorsAndRecovers()
    {
        // 16 threads keep working (token, lock, fencing, cache, seen) while the server is
        // SIGKILLed under them and started again, empty. Every call must end with a
        // result or a typed Unavailable within the bound; the same threads must recover.
        constexpr int Workers = 16;
        const QString key = uniqueKey("lock:order");
        auto holder = m_store->locks().acquire(key, 3 * CommandTimeout); // the shortest allowed
        QVERIFY(holder.ok() && holder.value());

        std::atomic<bool> stop{false};
        std::atomic<bool> serverBack{false};
        std::atomic<int> unavailable{0}, otherErrors{0}, succeeded{0}, recovered{0};
        std::atomic<qint64> slowestMs{0};
        QString firstOther;
        std::mutex firstOtherMutex;
        auto record = [&](const auto &result, qint64 elapsed) {
            qint64 seen = slowestMs.load();
            while (elapsed > seen && !slowestMs.compare_exchange_weak(seen, elapsed)) {
            }
            if (result.ok()) {
                succeeded.fetch_add(1);
                return true;
            }
            if (result.error().code == core::ErrorCode::Unavailable) {
                unavailable.fetch_add(1);
            } else {
                otherErrors.fetch_add(1);
                std::lock_guard lock(firstOtherMutex);
                firstOther = describe(result.error());
            }
            return false;
        };
        std::vector<std::thread> threads;
        for (int t = 0; t < Workers; ++t) {
            threads.emplace_back([&, t] {
                bool counted = false;
                for (int i = 0; !stop.load(); ++i) {
                    QElapsedTimer timer;
                    timer.start();
                    bool ok = false;
                    switch ((t + i) % 6) {
                    case 0: {
                        auto r = m_store->tokens().issue(uniqueKey("attempt"), 10s);
                        ok = record(r, timer.elapsed());
                        break;
                    }
                    case 1: {
                        auto r = m_store->tokens().consume(uniqueKey("attempt"), QStringLiteral("x"));
                        ok = record(r, timer.elapsed());
                        break;
                    }
                    case 2: {
                        auto r = m_store->locks().acquire(uniqueKey("lock:order"), 10s, uniqueKey("order"));
                        ok = record(r, timer.elapsed());
                        if (ok && r.value())
                            (void)r.value()->release();
                        break;
                    }
                    case 3: {
                        auto r = m_store->fencing().next(uniqueKey("order"));
                        ok = record(r, timer.elapsed());
                        break;
                    }
                    case 4: {
                        auto r = m_store->idempotency().get(uniqueKey("user"), QStringLiteral("k"));
                        ok = record(r, timer.elapsed());
                        break;
                    }
                    default: {
                        auto r = m_store->seenProcessed().seen(QStringLiteral("wechat"), uniqueKey("pay"));
                        ok = record(r, timer.elapsed());
                        break;
                    }
                    }
                    if (ok && serverBack.load() && !counted) {
                        counted = true;
                        recovered.fetch_add(1);
                    }
                    std::this_thread::sleep_for(5ms);
                }
            });
        }
        auto stopWorkers = qScopeGuard([&] {
            stop.store(true);
            for (auto &thread : threads)
                thread.join();
        });

        QTest::qSleep(300); // let them work
        QVERIFY(m_server->kill());
        const int unavailableBefore = unavailable.load();
        QTRY_VERIFY_WITH_TIMEOUT(unavailable.load() > unavailableBefore + 3 * Workers, 15000);
        QVERIFY(m_store->degraded());
        // The holder learns that it can no longer rely on its lock.
        QTRY_VERIFY_WITH_TIMEOUT(holder.value()->lost(), 10000);
        auto late = holder.value()->release();
        QVERIFY(!late.ok());
        QCOMPARE(late.error().code, core::ErrorCode::Unavailable);

        QString error;
        QVERIFY2(m_server->startAgain(&error), qPrintable(error));
        serverBack.store(true);
        QTRY_COMPARE_WITH_TIMEOUT(recovered.load(), Workers, 20000);
        stopWorkers.dismiss();
        stop.store(true);
        for (auto &thread : threads)
            thread.join();

        QVERIFY2(otherErrors.load() == 0, qPrintable(firstOther));
        QVERIFY2(slowestMs.load() < FailFastBoundMs,
                 qPrintable(QStringLiteral("a call took %1 ms").arg(slowestMs.load())));
        QVERIFY(waitUntilReachable(*m_store, 5000));
        QVERIFY(!m_store->degraded());
        qInfo("killed mid-test: %d calls answered, %d Unavailable, slowest call %lld ms; all %d threads recovered",
              succeeded.load(), unavailable.load(), static_cast<long long>(slowestMs.load()), Workers);
    }

    void hungServerTimesOut()
    {
        // SIGSTOP: the TCP connection stays open but nothing answers. Calls must give up
        // after the command timeout, not hang; after SIGCONT the store recovers.
        QVERIFY(m_store->ping().ok());
        QFile pidFile(m_server->folder() + QStringLiteral("/redis.pid"));
        QVERIFY2(pidFile.open(QIODevice::ReadOnly), qPrintable(pidFile.fileName()));
        const pid_t pid = static_cast<pid_t>(pidFile.readAll().trimmed().toLongLong());
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid, SIGSTOP), 0);
        auto resume = qScopeGuard([pid] { ::kill(pid, SIGCONT); });

        // Each call is one unanswered round trip: the first on the open connection, the
        // second the handshake of a new one (the TCP connect itself succeeds: the kernel
        // accepts for a stopped process), the third inside the connect backoff.
        const qint64 boundMs = CommandTimeout.count() + 1000;
        qint64 slowest = 0;
        for (int i = 0; i < 3; ++i) {
            QElapsedTimer timer;
            timer.start();
            auto token = m_store->tokens().issue(uniqueKey("attempt"), 10s);
            const qint64 took = timer.elapsed();
            slowest = std::max(slowest, took);
            QVERIFY(!token.ok());
            QCOMPARE(token.error().code, core::ErrorCode::Unavailable);
            QVERIFY2(took < boundMs,
                     qPrintable(QStringLiteral("call %1 took %2 ms, bound: command timeout + 1 s = %3 ms")
                                    .arg(i + 1)
                                    .arg(took)
                                    .arg(boundMs)));
        }
        QVERIFY(m_store->degraded());
        qInfo("hung server: calls failed after at most %lld ms (command timeout %lld ms)",
              static_cast<long long>(slowest), static_cast<long long>(CommandTimeout.count()));

        resume.dismiss();
        QCOMPARE(::kill(pid, SIGCONT), 0);
        QVERIFY(waitUntilReachable(*m_store, 15000));
        QVERIFY(!m_store->degraded());
    }

    void storeStartsWhileRedisIsDown()
    {
        // Rule 5: construction never needs Redis; calls fail fast, then recover.
        QVERIFY(m_server->kill());
        redis::RedisKeyStore early(optionsFor(m_server->url()), m_epochs);
        QElapsedTimer timer;
        timer.start();
        auto pinged = early.ping();
        QVERIFY(!pinged.ok());
        QCOMPARE(pinged.error().code, core::ErrorCode::Unavailable);
        QVERIFY2(pinged.error().internalMessage.contains(QString::number(m_server->port())),
                 qPrintable(pinged.error().internalMessage));
        QVERIFY(timer.elapsed() < FailFastBoundMs);
        QVERIFY(early.degraded());
        // Inside the backoff: no network, same typed error at once.
        auto again = early.tokens().issue(uniqueKey("attempt"), 10s);
        QVERIFY(!again.ok());
        QCOMPARE(again.error().code, core::ErrorCode::Unavailable);

        QString error;
        QVERIFY2(m_server->startAgain(&error), qPrintable(error));
        QVERIFY(waitUntilReachable(early, 15000));
        QVERIFY(!early.degraded());
    }

    // A thread's connection that Redis closed while the thread was idle (a restart, a
    // failover, a timeout on the server) is not used for the thread's next call: the
    // calls that may not be sent twice (a lock's acquire, a token's consume) would fail
    // once on it and the payment would go on without its lock.
    void connectionClosedWhileIdleIsNotUsed()
    {
        const QString order = uniqueKey("order");
        auto warm = m_store->locks().acquire(uniqueKey("lock:order"), 10s, order); // this thread's connection
        QVERIFY(warm.ok() && warm.value());
        QVERIFY(warm.value()->release().ok());
        const QString scope = uniqueKey("attempt");
        auto issued = m_second->tokens().issue(scope, 60s);
        QVERIFY(issued.ok());

        QVERIFY(m_server->kill());
        QString error;
        QVERIFY2(m_server->startAgain(&error), qPrintable(error));
        // The server is back (asked through a third store: both connections stay idle).
        redis::RedisKeyStore probe(optionsFor(m_server->url()), m_epochs);
        QVERIFY2(waitUntilReachable(probe, 15000), qPrintable(m_server->logTail()));

        auto lock = m_store->locks().acquire(uniqueKey("lock:order"), 10s, order);
        QVERIFY2(lock.ok(), lock.ok() ? "" : qPrintable(describe(lock.error())));
        QVERIFY(lock.value());
        QVERIFY(lock.value()->fencingToken() > warm.value()->fencingToken());
        QVERIFY(lock.value()->release().ok());
        QVERIFY(!m_store->degraded());
        // The same for the one-time token (gone with the empty restart: false, not an error).
        auto consumed = m_second->tokens().consume(scope, issued.value());
        QVERIFY2(consumed.ok(), consumed.ok() ? "" : qPrintable(describe(consumed.error())));
        QVERIFY(!consumed.value());
        QVERIFY(!m_second->degraded());
    }

    // 16 threads of one store meet a Redis restarted empty at the same instant, each on a
    // connection of its own: the store hands out one fence epoch for it, not one per
    // connection (every extra one is a database row and a warning in the log).
    void threadsMeetingANewInstanceTogetherTakeOneEpoch()
    {
        QVERIFY(m_server->kill());
        QString error;
        QVERIFY2(m_server->startAgain(&error), qPrintable(error));
        auto before = m_epochs.largestEpoch();
        QVERIFY(before.ok());
        std::atomic<int> failed{0};
        testsupport::runConcurrently(16, [&](int) {
            if (!m_store->fencing().next(uniqueKey("order")).ok())
                failed.fetch_add(1);
        });
        QCOMPARE(failed.load(), 0);
        auto after = m_epochs.largestEpoch();
        QVERIFY(after.ok());
        QCOMPARE(after.value() - before.value(), 1u);
    }

    void scriptCacheFlushIsSurvived()
    {
        const QString scope = uniqueKey("attempt");
        auto token = m_store->tokens().issue(scope, 60s);
        QVERIFY(token.ok());
        QProcess cli;
        cli.start(QStringLiteral("redis-cli"), {QStringLiteral("-p"), QString::number(m_server->port()),
                                                QStringLiteral("SCRIPT"), QStringLiteral("FLUSH")});
        QVERIFY(cli.waitForFinished(10000));
        QCOMPARE(cli.readAllStandardOutput().trimmed(), QByteArrayLiteral("OK"));
        auto consumed = m_store->tokens().consume(scope, token.value()); // NOSCRIPT -> reload
        QVERIFY2(consumed.ok(), consumed.ok() ? "" : qPrintable(describe(consumed.error())));
        QVERIFY(consumed.value());
    }

    void holderLearnsOfRefusedRenewal()
    {
        // Someone deletes the lock behind the holder's back (an operator, a failover
        // that lost the key): the next renewal (every ttl/3) is refused and the holder
        // learns then — long before its 30 s lease would have run out by itself.
        const auto ttl = 30s;
        const qint64 boundMs = std::chrono::milliseconds(ttl / 3).count() + 2000;
        const QString key = uniqueKey("lock:order");
        QElapsedTimer sinceAcquire;
        sinceAcquire.start();
        auto holder = m_store->locks().acquire(key, ttl);
        QVERIFY(holder.ok() && holder.value());
        QCOMPARE(redisCli(m_server->port(), {QStringLiteral("DEL"), key}), QByteArrayLiteral("1"));
        QVERIFY(!holder.value()->lost());
        QTRY_VERIFY_WITH_TIMEOUT(holder.value()->lost(), 15000);
        const qint64 noticedAfter = sinceAcquire.elapsed();
        qInfo("refused renewal noticed %lld ms after the acquire (ttl %lld ms, renewal every %lld ms)",
              static_cast<long long>(noticedAfter), static_cast<long long>(std::chrono::milliseconds(ttl).count()),
              static_cast<long long>(std::chrono::milliseconds(ttl / 3).count()));
        QVERIFY2(noticedAfter < boundMs,
                 qPrintable(QStringLiteral("noticed after %1 ms, must be within ttl/3 + 2 s (%2 ms)")
                                .arg(noticedAfter)
                                .arg(boundMs)));
        auto released = holder.value()->release();
        QVERIFY(released.ok());
        QVERIFY(!released.value());
    }

    void passwordIsUsedAndWrongPasswordIsClear()
    {
        QString error;
        auto secured = RedisServer::start(RedisServer::Options{QStringLiteral("s3cret-pass")}, &error);
        QVERIFY2(secured, qPrintable(error));

        redis::RedisKeyStore right(optionsFor(secured->url()), m_epochs);
        auto token = right.tokens().issue(uniqueKey("attempt"), 10s);
        QVERIFY2(token.ok(), token.ok() ? "" : qPrintable(describe(token.error())));
        QVERIFY(!right.degraded());

        const QString wrongUrl = QStringLiteral("redis://:not-the-password@127.0.0.1:%1/0").arg(secured->port());
        redis::RedisKeyStore wrong(optionsFor(wrongUrl), m_epochs);
        auto refused = wrong.tokens().issue(uniqueKey("attempt"), 10s);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, core::ErrorCode::Misconfigured);
        QVERIFY2(refused.error().internalMessage.contains(QLatin1String("rejected the password")),
                 qPrintable(refused.error().internalMessage));
        QVERIFY2(!refused.error().internalMessage.contains(QLatin1String("not-the-password")),
                 "the password must not appear in messages");
        QVERIFY(wrong.degraded());

        const QString noPasswordUrl = QStringLiteral("redis://127.0.0.1:%1/0").arg(secured->port());
        redis::RedisKeyStore none(optionsFor(noPasswordUrl), m_epochs);
        auto missing = none.ping();
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, core::ErrorCode::Misconfigured);
        QVERIFY2(missing.error().internalMessage.contains(QLatin1String("requires a password")),
                 qPrintable(missing.error().internalMessage));
    }

    void factoryOpensRedis()
    {
        redis::KeyStoreSettings settings;
        auto url = config::RedisUrl::parse(m_server->url());
        QVERIFY(url.ok());
        settings.redis = url.value();
        settings.severalInstances = true;
        auto opened = redis::openKeyStore(settings, m_epochs);
        QVERIFY(opened.ok());
        QCOMPARE(opened.value()->backendName(), QStringLiteral("redis"));
        QVERIFY(opened.value()->ping().ok());
    }

private:
    std::unique_ptr<RedisServer> m_server;
};

QTEST_GUILESS_MAIN(TestKeyStoreRedis)
#include "tst_keystore_redis.moc"
