// Fencing tokens after the key store lost track of them, end to end: a real redis-server
// (two for the failback), the real RedisKeyStore, the real callback pipeline and worker
// over the database under test. The order carries the last token written to it; Redis
// then forgets its fence counters, or the agents fail over to a second Redis and back to
// the first (which kept its run_id and its old counters). A paid callback must still pay
// the order, and no token written to it may be lower than one written before — else the
// CAS refuses the payment as a stale fence and the money is received for an order that
// never becomes PAID. And with Redis unreachable, the database alone still pays an order
// once.

#include "settlementstack.h"

#include "core/callback/callbackpipeline.h"
#include "core/callback/callbackworker.h"
#include "redis/rediskeystore.h"
#include "sql/sqlcallbackstore.h"
#include "sql/sqlfenceepochsource.h"
#include "sql/sqlorders.h"
#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <mutex>
#include <thread>
#include <vector>

using namespace payonce;
using namespace payonce::core;
using namespace payonce::testsupport;
using namespace std::chrono_literals;

namespace {

constexpr qint64 kAmount = 12800;
const QString kMchId = QStringLiteral("1900000001");

redis::RedisOptions optionsFor(const QString &url)
{
    redis::RedisOptions options = redis::RedisOptions::fromUrl(url).value();
    options.connectTimeout = 1000ms;
    options.commandTimeout = 1000ms;
    return options;
}

bool waitUntilReachable(KeyStore &store)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 15000) {
        if (store.ping().ok())
            return true;
        QTest::qSleep(50);
    }
    return false;
}

QString describe(const CallbackOutcome &out)
{
    return callbackOutcomeName(out.code) + QLatin1Char('/') + out.note + QLatin1Char(' ') + out.message;
}

} // namespace

class TestFenceRecovery : public QObject {
    Q_OBJECT
private:
    SettlementStack m_stack; // the database, its stores and the verifier; its embedded key store is not used
    int m_serial = 0;

    sql::Database &db() { return m_stack.database(); }
    void exec(const QString &statement, const QVariantList &binds) { QVERIFY(m_stack.exec(statement, binds)); }

    struct Order {
        QString orderNo, paymentNo, payNo, skuId;
    };

    /// An order in PAYING, its WeChat attempt pending, as a confirm leaves it: two units of
    /// its own SKU (stock 10), a coupon and points, so every effect has a row to count.
    Order payingOrder()
    {
        Order o;
        const QString serial = QString::number(++m_serial) + u'X'
                               + QString::number(QDateTime::currentMSecsSinceEpoch());
        o.orderNo = QStringLiteral("ORD-FENCE-") + serial;
        o.paymentNo = QStringLiteral("PNFENCE") + serial;
        o.payNo = QStringLiteral("4200FENCE") + serial;
        o.skuId = QStringLiteral("SKU-") + o.orderNo;
        exec(QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, 10, 1)"), {o.skuId});
        createOrder(db(), rewardedOrder(o.orderNo, 20240, kAmount, o.skuId, 2));
        exec(QStringLiteral("UPDATE orders SET status = 'PAYING' WHERE order_no = ?"), {o.orderNo});
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        exec(QStringLiteral(
                 "INSERT INTO payment_records (payment_no, order_no, channel, status, attempt, amount_fen, "
                 "code_url, created_at, updated_at) VALUES (?, ?, 'wechat', 'pending', 1, ?, 'weixin://x', ?, ?)"),
             {o.paymentNo, o.orderNo, kAmount, now, now});
        return o;
    }

    qint64 fenceOf(const QString &orderNo)
    {
        return m_stack.text(QStringLiteral("SELECT fence FROM orders WHERE order_no = ?"), {orderNo}).toLongLong();
    }

    QString statusOf(const QString &orderNo)
    {
        return m_stack.text(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo});
    }

    /// What a confirm does with the order lock `rounds` times: lock with the order as fence
    /// scope, a fenced write of its token, unlock. Every write must be accepted: a token
    /// below the one written before is a fencing token gone backwards.
    void writeTokens(KeyStore &keys, const QString &orderNo, int rounds)
    {
        for (int i = 0; i < rounds; ++i) {
            auto lock = keys.locks().acquire(QStringLiteral("lock:order:") + orderNo, 10s, orderNo);
            QVERIFY2(lock.ok(), lock.ok() ? "" : qPrintable(lock.error().internalMessage));
            QVERIFY(lock.value());
            const qint64 token = qint64(lock.value()->fencingToken());
            const qint64 before = fenceOf(orderNo);
            auto written = db().write(
                [&](sql::Session &session) { return sql::SqlOrders(db()).recordFence(session, orderNo, token); });
            QVERIFY2(written.ok(), written.ok() ? "" : qPrintable(written.error().internalMessage));
            QVERIFY2(written.value() == TransitionOutcome::Transitioned,
                     qPrintable(QStringLiteral("token %1:%2 refused, the order already carries %3:%4")
                                    .arg(token >> 32)
                                    .arg(token & 0xFFFFFFFF)
                                    .arg(before >> 32)
                                    .arg(before & 0xFFFFFFFF)));
            QVERIFY(lock.value()->release().ok());
        }
    }

    /// The order PAID by `order.payNo` with every effect once: stock taken once (10 → 8),
    /// one coupon, one points entry, one outbox event, one processed log row.
    void verifyPaidOnce(const Order &order)
    {
        QCOMPARE(statusOf(order.orderNo), QStringLiteral("PAID"));
        QCOMPARE(m_stack.text(QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {order.orderNo}),
                 order.payNo);
        QCOMPARE(m_stack.count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {order.orderNo}),
                 qint64(1));
        QCOMPARE(m_stack.text(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"), {order.skuId}),
                 QStringLiteral("8"));
        QCOMPARE(m_stack.count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), {order.orderNo}),
                 qint64(1));
        QCOMPARE(m_stack.count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), {order.orderNo}),
                 qint64(1));
        QCOMPARE(m_stack.count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {order.orderNo}),
                 qint64(1));
        QCOMPARE(m_stack.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"), {order.payNo}),
                 qint64(1));
        QCOMPARE(m_stack.count(
                     QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                     {order.payNo}),
                 qint64(1));
    }

    /// A real redis-server and the agent's key store on it, reachable; keys null (and
    /// error saying why) when either could not be had.
    struct RedisUnderTest {
        std::unique_ptr<RedisServer> server;
        std::unique_ptr<redis::RedisKeyStore> keys;
        QString error;
    };
    RedisUnderTest startRedis()
    {
        RedisUnderTest r;
        r.server = RedisServer::start(&r.error);
        if (!r.server)
            return r;
        r.keys = std::make_unique<redis::RedisKeyStore>(optionsFor(r.server->url()), *m_stack.epochs);
        if (!waitUntilReachable(*r.keys)) {
            r.error = QStringLiteral("redis-server not reachable: ") + r.server->logTail();
            r.keys.reset();
        }
        return r;
    }

    CallbackPipelineOptions pipelineOptions() const
    {
        CallbackPipelineOptions o;
        o.weChatMchId = kMchId;
        o.modeCacheMs = 0;
        o.lockWait = 2s;
        return o;
    }

    /// The platform's paid notification for `order`: SUCCESS and the order PAID, with a
    /// token not below the one the order carried.
    void paidCallbackPays(KeyStore &keys, const Order &order)
    {
        const qint64 before = fenceOf(order.orderNo);
        CallbackPipeline pipeline(*m_stack.verifier, *m_stack.callbackStore, *m_stack.modes, keys.locks(),
                                  &keys.seenProcessed(), m_stack.clock, pipelineOptions());
        const CallbackOutcome out = pipeline.handle(jsonDelivery(order.payNo, order.paymentNo, kAmount));
        QVERIFY2(out.success(), qPrintable(describe(out)));
        QCOMPARE(statusOf(order.orderNo), QStringLiteral("PAID"));
        QVERIFY2(fenceOf(order.orderNo) > before, "the payment was written without a newer token");
        QCOMPARE(pipeline.staleFenceRefused(), qint64(0));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_stack.start(dialectUnderTest(), kMchId, &error), qPrintable(error));
    }

    // First of all (the worker must see this test's rows alone; the next test leaves its
    // row accepted on purpose). Redis is cut while payments are in flight: one delivery was
    // recorded `accepted` because another holder had the pay lock; another order's first
    // deliveries arrive only now. The worker's retry and the platform's re-sends, on two
    // pipelines at once (two agents), settle without a lock or a fence on purpose
    // (docs/design.md rule 5): the status CAS decides, so each order is paid once with each
    // effect once, the token an order carries stays as it was (an unfenced write neither
    // lowers nor clears it), each settlement is counted as unfenced, and once Redis is back
    // every token handed out is above the last one written.
    void aPaymentWhileRedisIsUnreachableIsDecidedByTheDatabase()
    {
        RedisUnderTest redis = startRedis();
        QVERIFY2(redis.keys, qPrintable(redis.error));
        RedisServer *server = redis.server.get();
        redis::RedisKeyStore &keys = *redis.keys;
        const Order order = payingOrder();
        writeTokens(keys, order.orderNo, 5);
        const qint64 fenced = fenceOf(order.orderNo);
        QVERIFY(fenced > 0);

        CallbackPipelineOptions options = pipelineOptions();
        options.lockWait = 300ms;
        CallbackPipeline first(*m_stack.verifier, *m_stack.callbackStore, *m_stack.modes, keys.locks(),
                               &keys.seenProcessed(), m_stack.clock, options);
        CallbackPipeline second(*m_stack.verifier, *m_stack.callbackStore, *m_stack.modes, keys.locks(),
                                &keys.seenProcessed(), m_stack.clock, options);
        {
            auto held = keys.locks().acquire(QStringLiteral("lock:pay:") + order.payNo, 60s, order.orderNo);
            QVERIFY2(held.ok() && held.value(), "the pay lock was not taken");
            const CallbackOutcome recorded = first.handle(jsonDelivery(order.payNo, order.paymentNo, kAmount));
            QVERIFY2(recorded.success() && recorded.note == u"lock_busy_durable", qPrintable(describe(recorded)));
            QCOMPARE(m_stack.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = "
                                                  "'accepted'"),
                                   {order.payNo}),
                     qint64(1));
            QVERIFY(server->kill()); // with the lock still held: its holder is cut off too
        }
        QCOMPARE(statusOf(order.orderNo), QStringLiteral("PAYING"));

        // A second order, never notified before, whose first deliveries arrive now: nobody
        // has a durable row, the re-sends race to settle it.
        const Order fresh = payingOrder();
        constexpr int kResends = 8;
        std::mutex mutex;
        QStringList refused;
        std::vector<std::thread> resends;
        for (int i = 0; i < 2 * kResends; ++i) {
            resends.emplace_back([&, i] {
                CallbackPipeline &pipeline = i % 2 ? second : first;
                const Order &o = i < kResends ? order : fresh;
                const CallbackOutcome out = pipeline.handle(jsonDelivery(o.payNo, o.paymentNo, kAmount));
                if (!out.success()) {
                    std::lock_guard guard(mutex);
                    refused << o.orderNo + QStringLiteral(": ") + describe(out);
                }
            });
        }
        CallbackWorker worker(first, *m_stack.callbackStore, *m_stack.modes, m_stack.clock, 0);
        (void)worker.runOnce();
        for (std::thread &t : resends)
            t.join();
        QVERIFY2(refused.isEmpty(), qPrintable(refused.join(QStringLiteral("; "))));
        for (const Order &o : {order, fresh}) {
            QCOMPARE(m_stack.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = "
                                                  "'accepted'"),
                                   {o.payNo}),
                     qint64(0));
            verifyPaidOnce(o);
        }
        QCOMPARE(fenceOf(order.orderNo), fenced);
        QCOMPARE(fenceOf(fresh.orderNo), qint64(0));
        QCOMPARE(first.unfencedSettlements() + second.unfencedSettlements(), qint64(2));
        QCOMPARE(first.staleFenceRefused() + second.staleFenceRefused(), qint64(0));

        // Redis is back, empty: a new epoch, every token above the one the order carries.
        QVERIFY2(server->startAgain(&redis.error), qPrintable(redis.error));
        QVERIFY(waitUntilReachable(keys));
        writeTokens(keys, order.orderNo, 2);
        QVERIFY(fenceOf(order.orderNo) > fenced);
        const CallbackOutcome late = first.handle(jsonDelivery(order.payNo, order.paymentNo, kAmount));
        QVERIFY2(late.success(), qPrintable(describe(late)));
        verifyPaidOnce(order);
        QCOMPARE(first.unfencedSettlements() + second.unfencedSettlements(), qint64(2));
    }

    void staleFenceOnAnAcceptedRowIsRetriedAndRaisesAFinding()
    {
        // Second: the first test leaves no accepted row, so the worker sees this one alone.
        // The order carries a token no key store will reach soon (written by a store whose
        // epoch is far ahead): every attempt is refused as stale. The delivery is answered
        // SUCCESS (it is recorded, `accepted`), so the worker must keep trying with fresh
        // tokens, never count the row finished, and raise a finding.
        RedisUnderTest redis = startRedis();
        QVERIFY2(redis.keys, qPrintable(redis.error));
        redis::RedisKeyStore &keys = *redis.keys;
        const Order order = payingOrder();
        exec(QStringLiteral("UPDATE orders SET fence = ? WHERE order_no = ?"),
             {qint64(0x7FFFFFFF) << 32, order.orderNo});

        CallbackPipeline pipeline(*m_stack.verifier, *m_stack.callbackStore, *m_stack.modes, keys.locks(),
                                  &keys.seenProcessed(), m_stack.clock, pipelineOptions());
        const CallbackOutcome first = pipeline.handle(jsonDelivery(order.payNo, order.paymentNo, kAmount));
        QCOMPARE(first.note, QStringLiteral("stale_fence"));
        QCOMPARE(m_stack.count(
                     QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'accepted'"),
                     {order.payNo}),
                 qint64(1));

        CallbackWorker worker(pipeline, *m_stack.callbackStore, *m_stack.modes, m_stack.clock, 0);
        const QString findings = QStringLiteral(
            "SELECT COUNT(*) FROM findings WHERE kind = 'stuck_accepted' AND pay_no = ? "
            "AND status = 'open'");
        for (int attempt = 1; attempt <= CallbackWorker::StaleFenceTriesBeforeFinding; ++attempt) {
            const qint64 refusedBefore = pipeline.staleFenceRefused();
            const CallbackWorker::Report report = worker.runOnce();
            QCOMPARE(report.seen, 1);
            QVERIFY2(report.finished == 0, "a row refused as a stale fence was counted finished");
            QCOMPARE(pipeline.staleFenceRefused(), refusedBefore + 1); // retried, with a fresh token
            QCOMPARE(m_stack.count(findings, {order.payNo}),
                     qint64(attempt < CallbackWorker::StaleFenceTriesBeforeFinding ? 0 : 1));
        }
        QCOMPARE(statusOf(order.orderNo), QStringLiteral("PAYING"));
        QCOMPARE(m_stack.count(
                     QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'accepted'"),
                     {order.payNo}),
                 qint64(1));
        const QString evidence = m_stack.text(
            QStringLiteral("SELECT evidence FROM findings WHERE kind = 'stuck_accepted' AND pay_no = ?"),
            {order.payNo});
        const QJsonObject parsed = QJsonDocument::fromJson(evidence.toUtf8()).object();
        QCOMPARE(parsed.value(QStringLiteral("reason")).toString(), QStringLiteral("stale_fence"));
        QCOMPARE(parsed.value(QStringLiteral("stale_fence_tries")).toInt(),
                 CallbackWorker::StaleFenceTriesBeforeFinding);
    }

    void paidCallbackAfterTheFenceKeysWereDeleted()
    {
        RedisUnderTest redis = startRedis();
        QVERIFY2(redis.keys, qPrintable(redis.error));
        RedisServer *server = redis.server.get();
        redis::RedisKeyStore &keys = *redis.keys;
        const Order order = payingOrder();
        writeTokens(keys, order.orderNo, 20);

        // An operator's DEL, a FLUSHDB, an eviction: every fence key is gone.
        const QByteArray deleted = server->cli(
            {QStringLiteral("EVAL"),
             QStringLiteral("local n = 0 for _, k in ipairs(redis.call('KEYS', 'fence:*')) do "
                            "redis.call('DEL', k) n = n + 1 end return n"),
             QStringLiteral("0")});
        QVERIFY2(deleted.toInt() > 0, deleted.constData());

        writeTokens(keys, order.orderNo, 3);
        paidCallbackPays(keys, order);
    }

    void paidCallbackAfterAFailbackToTheFirstRedis()
    {
        QString error;
        auto first = RedisServer::start(&error);
        QVERIFY2(first, qPrintable(error));
        auto second = RedisServer::start(&error);
        QVERIFY2(second, qPrintable(error));
        redis::RedisKeyStore keys(optionsFor(first->url()), *m_stack.epochs);
        QVERIFY(waitUntilReachable(keys));
        const QString firstRunId = keys.instanceId();
        const Order order = payingOrder();
        writeTokens(keys, order.orderNo, 5);

        // Failover: the first Redis leaves the endpoint (alive, data and run_id kept), the
        // second takes it over.
        QVERIFY2(takeOverEndpoint(*first, *second, &error), qPrintable(error));
        QVERIFY(waitUntilReachable(keys));
        QVERIFY(keys.instanceId() != firstRunId);
        writeTokens(keys, order.orderNo, 2);

        // Failback: the first Redis is back, with the counters it had before.
        QVERIFY2(takeOverEndpoint(*second, *first, &error), qPrintable(error));
        QVERIFY(waitUntilReachable(keys));
        QCOMPARE(keys.instanceId(), firstRunId);
        writeTokens(keys, order.orderNo, 2);
        paidCallbackPays(keys, order);
    }
};

QTEST_GUILESS_MAIN(TestFenceRecovery)
#include "tst_fencerecovery.moc"
