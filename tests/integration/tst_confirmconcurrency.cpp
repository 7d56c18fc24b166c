// The real confirm pipeline on the real database (once per dialect), the embedded key
// store and a fake gateway that counts creates: 100 concurrent confirms for one order,
// mixing the same key, new keys, the same token, stale tokens and freshly issued tokens
// on both channels. Exactly one gateway create, one payment record, the order PAYING
// once; every other answer is one the contract names. The tally is printed.

#include "storagefixture.h"

#include "core/confirm/confirmpipeline.h"
#include "core/confirm/tokenissuer.h"
#include "core/ports/clock.h"
#include "core/ports/paymentgateway.h"
#include "redis/embeddedkeystore.h"
#include "sql/sqlidempotencystore.h"
#include "sql/sqlorders.h"
#include "sql/sqlpaymentstore.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTest>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

using namespace payonce;
using namespace payonce::core;
using namespace payonce::testsupport;
using namespace std::chrono_literals;

namespace {

/// A WeChat platform whose trades are never paid and that refunds nothing: the tests'
/// gateways differ in createOrder() only.
class TestGateway : public PaymentGateway {
public:
    Channel channel() const override { return Channel::WeChat; }
    Result<GatewayTrade> query(const QString &) override { return GatewayTrade{}; }
    Result<void> close(const QString &) override { return {}; }
    Result<GatewayRefund> refund(const GatewayRefundRequest &) override
    {
        return Error::make(ErrorCode::Internal, QStringLiteral("no refunds in this test"));
    }
    Result<GatewayRefund> queryRefund(const QString &, const QString &) override { return GatewayRefund{}; }
};

class CountingGateway final : public TestGateway {
public:
    Result<GatewayOrder> createOrder(const GatewayOrderRequest &request) override
    {
        creates.fetch_add(1);
        std::this_thread::sleep_for(20ms); // a platform takes a while: lets the others pile up
        return GatewayOrder{QStringLiteral("weixin://wxpay/bizpayurl?pr=") + request.paymentNo};
    }
    std::atomic<int> creates{0};
};

/// A platform that takes its time: createOrder() blocks until release() (at most 20 s).
class SlowGateway final : public TestGateway {
public:
    Result<GatewayOrder> createOrder(const GatewayOrderRequest &request) override
    {
        std::unique_lock guard(m_mutex);
        m_entered = true;
        m_changed.notify_all();
        m_changed.wait_for(guard, 20s, [&] { return m_released; });
        return GatewayOrder{QStringLiteral("weixin://wxpay/bizpayurl?pr=") + request.paymentNo};
    }

    bool waitUntilEntered()
    {
        std::unique_lock guard(m_mutex);
        return m_changed.wait_for(guard, 20s, [&] { return m_entered; });
    }
    void release()
    {
        std::lock_guard guard(m_mutex);
        m_released = true;
        m_changed.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_entered = false;
    bool m_released = false;
};

constexpr qint64 kUser = 10086;
constexpr int kRequests = 100;

} // namespace

class TestConfirmConcurrency : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_db.start(), m_db.error()); }

    void hundredConcurrentConfirmsPayOnce()
    {
        sql::SqlFenceEpochSource epochs(*m_db.database);
        auto keys = redis::EmbeddedKeyStore::create(epochs);
        QVERIFY(keys.ok());
        core::KeyStore &store = *keys.value();
        sql::SqlIdempotencyStore idempotency(*m_db.database);
        sql::SqlPaymentStore payments(*m_db.database);
        sql::SqlOrders orders(*m_db.database);
        CountingGateway gateway;
        SystemClock clock;
        ConfirmPipeline pipeline(
            idempotency, &store.idempotency(), store.tokens(), store.locks(), payments,
            [&](Channel) -> PaymentGateway * { return &gateway; }, clock);
        TokenIssuer issuer(payments, store.tokens());

        const QString orderNo = QStringLiteral("ORD-STORM");
        QVERIFY(orders.create(oneUnitOrder(orderNo, kUser)).ok());

        auto tokenOf = [&]() -> QString {
            const PaymentOutcome out = issuer.issueToken(kUser, orderNo);
            return QJsonDocument::fromJson(out.body).object().value(QStringLiteral("token")).toString();
        };
        const QString stale = tokenOf(); // replaced by the next issue: never valid again
        const QString shared = tokenOf();
        QVERIFY(!stale.isEmpty() && !shared.isEmpty());

        std::mutex mutex;
        std::map<QString, int> tally;
        QStringList unexpected;
        runConcurrently(kRequests, [&](int i) {
            ConfirmRequest request{kUser, QStringLiteral("key-%1").arg(i), shared, orderNo, Channel::WeChat};
            switch (i % 5) {
            case 0: request.idempotencyKey = QStringLiteral("key-same"); break; // same key, same token
            case 1: break;                                                      // new key, same token
            case 2: request.token = tokenOf(); break;                           // new key, new token
            case 3:
                request.token = tokenOf();
                request.channel = Channel::Alipay;
                break;
            case 4: request.token = stale; break; // new key, stale token
            }
            const PaymentOutcome out = pipeline.confirm(request);
            const QString label = (out.replayed ? QStringLiteral("replay:") : QString()) + paymentOutcomeName(out.code)
                                  + QLatin1Char('@') + layerName(out.layer);
            std::lock_guard guard(mutex);
            ++tally[label];
            const bool allowed =
                out.replayed || (out.code == PaymentOutcomeCode::Created && out.layer == Layer::None)
                || (out.code == PaymentOutcomeCode::RequestInProgress
                    && (out.layer == Layer::IdempotencyKey || out.layer == Layer::Lock))
                || (out.code == PaymentOutcomeCode::DuplicateRequest && out.layer == Layer::Token)
                || (out.code == PaymentOutcomeCode::DuplicatePayment && out.layer == Layer::UniqueIndex)
                || (out.code == PaymentOutcomeCode::OrderStateConflict && out.layer == Layer::StateMachine);
            if (!allowed)
                unexpected.append(label + QLatin1Char(' ') + QString::fromUtf8(out.body));
        });

        QString printed;
        int created = 0;
        for (const auto &[label, count] : tally) {
            printed += QStringLiteral("  %1: %2\n").arg(label).arg(count);
            if (label == QLatin1String("created@none"))
                created = count;
        }
        qInfo().noquote() << "tally of" << kRequests << "confirms on" << dialectName(dialectUnderTest()) << ":\n"
                          << printed;
        QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join(QLatin1Char('\n'))));
        QCOMPARE(created, 1);
        QCOMPARE(gateway.creates.load(), 1);
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ?"),
                           {orderNo}),
                 qint64(1));
        QCOMPARE(
            countRows(*m_db.database,
                      QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ? AND status = 'pending'"),
                      {orderNo}),
            qint64(1));
        QCOMPARE(countRows(*m_db.database,
                           QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAYING' "
                                          "AND version = 1"),
                           {orderNo}),
                 qint64(1));
        QCOMPARE(countRows(*m_db.database,
                           QStringLiteral("SELECT COUNT(*) FROM idempotency_keys WHERE status = 'in_flight'")),
                 qint64(0));
    }

    void slowConfirmIsNotTakenOver()
    {
        // A confirm whose gateway call outlasts the in-flight timeout (query + create with
        // retries; nginx answered 504 meanwhile and the client retries with the same key):
        // the retry must be told "in progress", and once the confirm ends its response is
        // the one every later retry gets.
        constexpr qint64 timeoutMs = 1500;
        sql::SqlFenceEpochSource epochs(*m_db.database);
        auto keys = redis::EmbeddedKeyStore::create(epochs);
        QVERIFY(keys.ok());
        core::KeyStore &store = *keys.value();
        sql::SqlIdempotencyStore idempotency(*m_db.database, timeoutMs);
        sql::SqlPaymentStore payments(*m_db.database);
        SlowGateway gateway;
        SystemClock clock;
        ConfirmPipeline pipeline(
            idempotency, nullptr, store.tokens(), store.locks(), payments,
            [&](Channel) -> PaymentGateway * { return &gateway; }, clock);
        TokenIssuer issuer(payments, store.tokens());

        const QString orderNo = QStringLiteral("ORD-SLOW");
        QVERIFY(sql::SqlOrders(*m_db.database).create(oneUnitOrder(orderNo, kUser)).ok());
        const QString token = QJsonDocument::fromJson(issuer.issueToken(kUser, orderNo).body)
                                  .object()
                                  .value(QStringLiteral("token"))
                                  .toString();
        QVERIFY(!token.isEmpty());
        const ConfirmRequest request{kUser, QStringLiteral("key-slow"), token, orderNo, Channel::WeChat};

        PaymentOutcome first;
        std::thread running([&] { first = pipeline.confirm(request); });
        auto joined = qScopeGuard([&] {
            gateway.release();
            running.join();
        });
        QVERIFY(gateway.waitUntilEntered());
        QTest::qSleep(int(2 * timeoutMs)); // the gateway call runs on, past the timeout

        const PaymentOutcome retry = pipeline.confirm(request);
        QVERIFY2(retry.code == PaymentOutcomeCode::RequestInProgress && retry.layer == Layer::IdempotencyKey,
                 qPrintable(QStringLiteral("the retry while the first runs got %1@%2")
                                .arg(paymentOutcomeName(retry.code), layerName(retry.layer))));

        joined.dismiss();
        gateway.release();
        running.join();
        QCOMPARE(first.code, PaymentOutcomeCode::Created);
        const PaymentOutcome after = pipeline.confirm(request);
        QVERIFY2(after.replayed && after.code == PaymentOutcomeCode::Created,
                 qPrintable(QStringLiteral("the retry after it got %1@%2%3")
                                .arg(paymentOutcomeName(after.code), layerName(after.layer),
                                     after.replayed ? QStringLiteral(" (replayed)") : QString())));
        QCOMPARE(after.body, first.body);
        QCOMPARE(countRows(*m_db.database,
                           QStringLiteral("SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = 'key-slow' "
                                          "AND status = 'completed'")),
                 qint64(1));
    }

private:
    MigratedDatabase m_db;
};

QTEST_GUILESS_MAIN(TestConfirmConcurrency)
#include "tst_confirmconcurrency.moc"
