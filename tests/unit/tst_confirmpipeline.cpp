// The confirm path, one Stripe/contract semantic per test: fakes for the durable stores
// and the gateway, the real embedded key store for tokens, locks and the L1 cache.
// An event log shared by the fakes records lock, BEGIN/COMMIT/ROLLBACK, unlock and the
// gateway calls, so the order of events is checked from the outside.

#include "core/confirm/confirmpipeline.h"
#include "core/confirm/idempotencykey.h"
#include "core/confirm/tokenissuer.h"
#include "core/gateways/breakerregistry.h"
#include "core/gateways/resilientgateway.h"
#include "core/ports/breakermodestore.h"
#include "core/ports/clock.h"
#include "core/ports/fenceepochsource.h"
#include "core/ports/idempotencystore.h"
#include "core/ports/paymentgateway.h"
#include "core/ports/paymentstore.h"
#include "fakes/fakeclock.h"
#include "fakes/fakemodestore.h"
#include "redis/embeddedkeystore.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <map>
#include <mutex>
#include <optional>

using namespace payonce;
using namespace payonce::core;
using payonce::testsupport::FakeClock;
using payonce::testsupport::FakeModeStore;
using namespace std::chrono_literals;

namespace {

struct EventLog {
    std::mutex mutex;
    QStringList events;
    void add(const QString &event)
    {
        std::lock_guard guard(mutex);
        events.append(event);
    }
    qsizetype indexOf(const QString &event)
    {
        std::lock_guard guard(mutex);
        return events.indexOf(event);
    }
};

class FakeEpochs final : public FenceEpochSource {
public:
    Result<quint32> newEpoch(const QString &, const QString &) override { return quint32(1); }
    Result<quint32> largestEpoch() override { return quint32(1); }
};

/// L1 in memory with the store's contract (the SQL adapter is tested per dialect).
class FakeIdempotencyStore final : public IdempotencyStore {
public:
    Result<IdempotencyBegin> begin(qint64 userId, const QString &key, const QByteArray &fingerprint,
                                   qint64 nowMs) override
    {
        std::lock_guard guard(m_mutex);
        auto it = m_records.find({userId, key});
        if (it == m_records.end()) {
            m_records[{userId, key}] = IdempotencyRecord{userId,       key,   fingerprint, IdempotencyStatus::InFlight,
                                                         std::nullopt, nowMs, nowMs,       std::nullopt};
            const QString owner = QStringLiteral("owner-%1").arg(++m_owners);
            m_ownerOf[{userId, key}] = owner;
            return IdempotencyBegin{IdempotencyVerdict::Started, std::nullopt, owner};
        }
        if (it->second.fingerprint != fingerprint)
            return IdempotencyBegin{IdempotencyVerdict::Mismatch, std::nullopt};
        if (it->second.status == IdempotencyStatus::InFlight)
            return IdempotencyBegin{IdempotencyVerdict::InFlight, std::nullopt};
        return IdempotencyBegin{IdempotencyVerdict::Replay, it->second.response};
    }
    qint64 inFlightTimeoutMs() const override { return 60000; }
    Result<bool> heartbeat(qint64 userId, const QString &key, const QString &owner, qint64 nowMs) override
    {
        std::lock_guard guard(m_mutex);
        auto it = m_records.find({userId, key});
        if (it == m_records.end() || !owns(userId, key, owner) || it->second.status != IdempotencyStatus::InFlight)
            return false;
        it->second.lockedAtMs = nowMs;
        return true;
    }
    Result<bool> complete(qint64 userId, const QString &key, const QString &owner, const StoredResponse &response,
                          qint64 nowMs) override
    {
        std::lock_guard guard(m_mutex);
        auto it = m_records.find({userId, key});
        if (it == m_records.end() || !owns(userId, key, owner) || it->second.status != IdempotencyStatus::InFlight)
            return false;
        it->second.status = IdempotencyStatus::Completed;
        it->second.response = response;
        it->second.completedAtMs = nowMs;
        return true;
    }
    Result<bool> release(qint64 userId, const QString &key, const QString &owner) override
    {
        std::lock_guard guard(m_mutex);
        auto it = m_records.find({userId, key});
        if (it == m_records.end() || !owns(userId, key, owner) || it->second.status != IdempotencyStatus::InFlight)
            return false;
        m_records.erase(it);
        return true;
    }
    Result<std::optional<IdempotencyRecord>> find(qint64 userId, const QString &key) override
    {
        std::lock_guard guard(m_mutex);
        auto it = m_records.find({userId, key});
        return it == m_records.end() ? std::optional<IdempotencyRecord>() : std::optional(it->second);
    }
    Result<bool> unlockStuck(qint64, const QString &, qint64, const InTransaction &) override { return false; }
    Result<int> purgeOlderThan(qint64) override { return 0; }

private:
    bool owns(qint64 userId, const QString &key, const QString &owner) const
    {
        const auto found = m_ownerOf.find({userId, key});
        return found != m_ownerOf.end() && found->second == owner;
    }
    std::mutex m_mutex;
    std::map<std::pair<qint64, QString>, IdempotencyRecord> m_records;
    std::map<std::pair<qint64, QString>, QString> m_ownerOf;
    int m_owners = 0;
};

/// Orders and payment records in memory. A transaction works on a copy, committed when the
/// work succeeds; Busy runs it again, as the SQL store does.
class FakePaymentStore final : public PaymentStore {
public:
    explicit FakePaymentStore(EventLog &log) : m_log(log) {}

    struct State {
        std::map<QString, OrderSnapshot> orders;
        std::map<QString, qint64> fences;
        std::map<std::pair<QString, Channel>, PaymentRecord> records;
    };

    void addOrder(const QString &orderNo, qint64 userId, OrderStatus status = OrderStatus::Pending)
    {
        std::lock_guard guard(m_mutex);
        m_state.orders[orderNo] = OrderSnapshot{orderNo, userId, 9900, status};
    }
    State state()
    {
        std::lock_guard guard(m_mutex);
        return m_state;
    }

    Result<std::optional<OrderSnapshot>> findOrder(const QString &orderNo) override
    {
        std::lock_guard guard(m_mutex);
        auto it = m_state.orders.find(orderNo);
        return it == m_state.orders.end() ? std::optional<OrderSnapshot>() : std::optional(it->second);
    }

    Result<void> inTransaction(const std::function<Result<void>(ConfirmTransaction &)> &work) override
    {
        std::lock_guard guard(m_mutex);
        for (int attempt = 0;; ++attempt) {
            m_log.add(QStringLiteral("begin"));
            Tx tx(m_state);
            Result<void> result = work(tx);
            if (result.ok()) {
                m_state = tx.state;
                m_log.add(QStringLiteral("commit"));
                return result;
            }
            m_log.add(QStringLiteral("rollback"));
            if (result.error().code != ErrorCode::Busy || attempt >= 8)
                return result;
        }
    }

private:
    struct Tx final : ConfirmTransaction {
        explicit Tx(const State &s) : state(s) {}
        State state;

        Result<std::optional<OrderSnapshot>> order(const QString &orderNo) override
        {
            auto it = state.orders.find(orderNo);
            return it == state.orders.end() ? std::optional<OrderSnapshot>() : std::optional(it->second);
        }
        Result<bool> insertRecordIfAbsent(const PaymentRecord &record) override
        {
            return state.records.try_emplace({record.orderNo, record.channel}, record).second;
        }
        Result<std::optional<PaymentRecord>> record(const QString &orderNo, Channel channel) override
        {
            auto it = state.records.find({orderNo, channel});
            return it == state.records.end() ? std::optional<PaymentRecord>() : std::optional(it->second);
        }
        PaymentRecord *byNo(const QString &paymentNo)
        {
            for (auto &[key, record] : state.records) {
                if (record.paymentNo == paymentNo)
                    return &record;
            }
            return nullptr;
        }
        Result<bool> renumberRecord(const QString &paymentNo, const QString &newPaymentNo) override
        {
            PaymentRecord *r = byNo(paymentNo);
            if (!r || r->status != PaymentRecordStatus::Creating)
                return false;
            r->paymentNo = newPaymentNo;
            return true;
        }
        Result<bool> reuseFailedRecord(const QString &paymentNo) override
        {
            PaymentRecord *r = byNo(paymentNo);
            if (!r || r->status != PaymentRecordStatus::Failed)
                return false;
            r->status = PaymentRecordStatus::Creating;
            ++r->attempt;
            return true;
        }
        Result<TransitionOutcome> transition(const QString &orderNo, OrderStatus from, OrderStatus to,
                                             std::optional<qint64> fence) override
        {
            auto it = state.orders.find(orderNo);
            if (it == state.orders.end())
                return TransitionOutcome::NotFound;
            if (fence && state.fences[orderNo] > *fence)
                return TransitionOutcome::StaleFence;
            if (it->second.status != from)
                return TransitionOutcome::Lost;
            it->second.status = to;
            if (fence)
                state.fences[orderNo] = *fence;
            return TransitionOutcome::Transitioned;
        }
        Result<bool> markRecordPending(const QString &paymentNo, const QString &codeUrl) override
        {
            PaymentRecord *r = byNo(paymentNo);
            if (!r || r->status != PaymentRecordStatus::Creating)
                return false;
            r->status = PaymentRecordStatus::Pending;
            r->codeUrl = codeUrl;
            return true;
        }
        Result<bool> markRecordFailed(const QString &paymentNo, const QString &lastError) override
        {
            PaymentRecord *r = byNo(paymentNo);
            if (!r || r->status != PaymentRecordStatus::Creating)
                return false;
            r->status = PaymentRecordStatus::Failed;
            r->lastError = lastError;
            return true;
        }
    };

    EventLog &m_log;
    std::recursive_mutex m_mutex;
    State m_state;
};

class FakeGateway final : public PaymentGateway {
public:
    explicit FakeGateway(EventLog &log) : m_log(log) {}
    Channel channel() const override { return Channel::WeChat; }
    Result<GatewayOrder> createOrder(const GatewayOrderRequest &request) override
    {
        m_log.add(QStringLiteral("gateway.create"));
        ++createCalls;
        if (failing)
            return Error::make(ErrorCode::Unavailable, QStringLiteral("platform timeout"));
        ++creates;
        return GatewayOrder{QStringLiteral("weixin://wxpay/bizpayurl?pr=") + request.paymentNo};
    }
    Result<GatewayTrade> query(const QString &) override
    {
        m_log.add(QStringLiteral("gateway.query"));
        ++queries;
        if (failing)
            return Error::make(ErrorCode::Unavailable, QStringLiteral("platform timeout"));
        return queryAnswer;
    }
    Result<void> close(const QString &) override { return {}; }
    /// Fails the first refundFailures calls with Unavailable (the outcome unknown), then
    /// refunds; every call's refundNo is recorded.
    Result<GatewayRefund> refund(const GatewayRefundRequest &request) override
    {
        m_log.add(QStringLiteral("gateway.refund"));
        refundNos.append(request.refundNo);
        if (refundNos.size() <= refundFailures)
            return Error::make(ErrorCode::Unavailable, QStringLiteral("platform timeout"));
        if (refundRefusal)
            return *refundRefusal;
        GatewayRefund r;
        r.state = GatewayRefundState::Processing;
        r.refundNo = request.refundNo;
        r.paymentNo = request.paymentNo;
        r.amountFen = request.amountFen;
        return r;
    }
    Result<GatewayRefund> queryRefund(const QString &, const QString &refundNo) override
    {
        m_log.add(QStringLiteral("gateway.queryRefund"));
        GatewayRefund r;
        r.refundNo = refundNo;
        return r;
    }

    int createCalls = 0; ///< every create call, failed or not
    int creates = 0;     ///< creates that succeeded
    int queries = 0;
    bool failing = false;
    GatewayTrade queryAnswer;
    QStringList refundNos;
    int refundFailures = 0;
    std::optional<Error> refundRefusal;

private:
    EventLog &m_log;
};

/// The embedded store's locks, with acquire and release written to the event log.
class RecordingLocks final : public DistributedLock {
public:
    RecordingLocks(DistributedLock &inner, EventLog &log) : m_inner(inner), m_log(log) {}
    Result<std::unique_ptr<LockHandle>> acquire(const QString &key, std::chrono::milliseconds ttl,
                                                const QString &fenceScope) override
    {
        auto got = m_inner.acquire(key, ttl, fenceScope);
        if (!got.ok() || !got.value())
            return got;
        m_log.add(QStringLiteral("lock"));
        return std::unique_ptr<LockHandle>(new Handle(std::move(got).value(), m_log));
    }

private:
    struct Handle final : LockHandle {
        Handle(std::unique_ptr<LockHandle> h, EventLog &l) : inner(std::move(h)), log(l) {}
        QString key() const override { return inner->key(); }
        QString owner() const override { return inner->owner(); }
        quint64 fencingToken() const override { return inner->fencingToken(); }
        bool lost() const override { return inner->lost(); }
        Result<bool> release() override
        {
            log.add(QStringLiteral("unlock"));
            return inner->release();
        }
        void stopRenewingForTest() override { inner->stopRenewingForTest(); }
        std::unique_ptr<LockHandle> inner;
        EventLog &log;
    };
    DistributedLock &m_inner;
    EventLog &m_log;
};

constexpr qint64 kUser = 10086;
const QString kOrder = QStringLiteral("ORD001");

QJsonObject json(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object();
}

} // namespace

class TestConfirmPipeline : public QObject {
    Q_OBJECT

    struct Fixture {
        EventLog log;
        FakeClock clock;
        FakeEpochs epochs;
        std::unique_ptr<redis::EmbeddedKeyStore> keys;
        std::unique_ptr<RecordingLocks> locks;
        FakeIdempotencyStore idempotency;
        FakePaymentStore payments{log};
        FakeGateway gateway{log};
        FakeModeStore modes;
        std::unique_ptr<BreakerRegistry> breakers;
        std::unique_ptr<ResilientGateway> resilient;
        std::unique_ptr<ConfirmPipeline> pipeline;
        std::unique_ptr<TokenIssuer> issuer;

        explicit Fixture(bool withCache = true)
        {
            keys = std::move(redis::EmbeddedKeyStore::create(epochs)).value();
            locks = std::make_unique<RecordingLocks>(keys->locks(), log);
            CircuitBreakerOptions breakerOptions;
            breakerOptions.minimumCalls = 100; // these tests do not trip it by rate
            breakers = std::make_unique<BreakerRegistry>(clock, modes, nullptr, breakerOptions);
            RetryOptions retry;
            retry.maxAttempts = 3;
            resilient = std::make_unique<ResilientGateway>(gateway, breakers->breaker(QStringLiteral("gateway.wechat")),
                                                           RetryPolicy(retry, [](std::chrono::milliseconds) {}));
            pipeline = std::make_unique<ConfirmPipeline>(
                idempotency, withCache ? &keys->idempotency() : nullptr, keys->tokens(), *locks, payments,
                [this](Channel) -> PaymentGateway * { return resilient.get(); }, clock);
            issuer = std::make_unique<TokenIssuer>(payments, keys->tokens());
            payments.addOrder(kOrder, kUser);
        }

        QString token(qint64 user = kUser, const QString &order = kOrder)
        {
            return keys->tokens().issue(paymentTokenScope(user, order), 300s).value();
        }
        ConfirmRequest request(const QString &key, const QString &tok)
        {
            return ConfirmRequest{kUser, key, tok, kOrder, Channel::WeChat};
        }
        PaymentRecord record() { return payments.state().records.at({kOrder, Channel::WeChat}); }
        OrderStatus orderStatus() { return payments.state().orders.at(kOrder).status; }
    };

private Q_SLOTS:
    void firstConfirmCreatesAndCommitsBeforeUnlock()
    {
        Fixture f;
        const PaymentOutcome out = f.pipeline->confirm(f.request(QStringLiteral("key-1"), f.token()));
        QCOMPARE(out.code, PaymentOutcomeCode::Created);
        QCOMPARE(out.layer, Layer::None);
        QVERIFY(!out.replayed);
        const QJsonObject body = json(out.body);
        QCOMPARE(body.value(QStringLiteral("status")).toString(), QStringLiteral("PAYING"));
        QCOMPARE(body.value(QStringLiteral("duplicate")).toBool(true), false);
        QVERIFY(body.value(QStringLiteral("code_url")).toString().startsWith(QLatin1String("weixin:")));
        QCOMPARE(body.value(QStringLiteral("payment_no")).toString(), f.record().paymentNo);
        QCOMPARE(f.orderStatus(), OrderStatus::Paying);
        QCOMPARE(f.record().status, PaymentRecordStatus::Pending);
        QCOMPARE(f.gateway.creates, 1);

        // lock → BEGIN → COMMIT → unlock → gateway → short transaction
        const QStringList expected{QStringLiteral("lock"),   QStringLiteral("begin"),          QStringLiteral("commit"),
                                   QStringLiteral("unlock"), QStringLiteral("gateway.create"), QStringLiteral("begin"),
                                   QStringLiteral("commit")};
        QCOMPARE(f.log.events, expected);

        const auto stored = f.idempotency.find(kUser, QStringLiteral("key-1")).value();
        QVERIFY(stored);
        QCOMPARE(stored->status, IdempotencyStatus::Completed);
        QCOMPARE(stored->response->outcome, QStringLiteral("created"));
        QCOMPARE(stored->response->body, out.body);
    }

    void replayReturnsTheStoredOutcomeAndBody_data()
    {
        QTest::addColumn<bool>("withCache");
        QTest::newRow("from the key-store cache") << true;
        QTest::newRow("from the database record") << false;
    }
    void replayReturnsTheStoredOutcomeAndBody()
    {
        QFETCH(bool, withCache);
        Fixture f(withCache);
        const ConfirmRequest request = f.request(QStringLiteral("key-1"), f.token());
        const PaymentOutcome first = f.pipeline->confirm(request);
        const PaymentOutcome again = f.pipeline->confirm(request);
        QCOMPARE(again.code, first.code);
        QCOMPARE(again.body, first.body);
        QVERIFY(again.replayed);
        QCOMPARE(again.layer, Layer::IdempotencyKey);
        QCOMPARE(f.gateway.createCalls, 1);
    }

    // The resilient decorator retries a refund with the request unchanged: the same
    // refundNo every attempt (the platform's idempotency key), and the retried call's
    // outcome is what the breaker sees.
    void refundRetriesWithTheSameRefundNo()
    {
        Fixture f;
        f.gateway.refundFailures = 2;
        GatewayRefundRequest request;
        request.paymentNo = QStringLiteral("PAY0001");
        request.refundNo = QStringLiteral("RF-0001");
        request.amountFen = 500;
        request.totalFen = 9900;
        const auto refunded = f.resilient->refund(request);
        QVERIFY(refunded.ok());
        QCOMPARE(refunded->refundNo, QStringLiteral("RF-0001"));
        QCOMPARE(refunded->amountFen, 500);
        QCOMPARE(f.gateway.refundNos, QStringList(3, QStringLiteral("RF-0001")));

        // Out of attempts: Unavailable, still only ever that refundNo.
        f.gateway.refundNos.clear();
        f.gateway.refundFailures = 3;
        const auto failed = f.resilient->refund(request);
        QVERIFY(!failed.ok());
        QCOMPARE(failed.error().code, ErrorCode::Unavailable);
        QCOMPARE(f.gateway.refundNos, QStringList(3, QStringLiteral("RF-0001")));

        // A business refusal (over-refund) is the platform answering: not retried.
        f.gateway.refundNos.clear();
        f.gateway.refundFailures = 0;
        f.gateway.refundRefusal = Error::make(ErrorCode::Conflict, QStringLiteral("over-refund"));
        const auto refused = f.resilient->refund(request);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, ErrorCode::Conflict);
        QCOMPARE(f.gateway.refundNos.size(), 1);
    }

    void refundFailsFastWhenTheBreakerIsOpen()
    {
        Fixture f;
        BreakerModeSetting open;
        open.mode = BreakerMode::ForcedOpen;
        open.actor = QStringLiteral("alice");
        open.reason = QStringLiteral("platform incident");
        // Through the shared mode store, as an operator sets it for every agent.
        QVERIFY(f.modes.set(QStringLiteral("gateway.wechat"), open).ok());
        f.resilient->breaker().refreshMode();
        GatewayRefundRequest request;
        request.paymentNo = QStringLiteral("PAY0001");
        request.refundNo = QStringLiteral("RF-0002");
        request.amountFen = 1;
        const auto refunded = f.resilient->refund(request);
        QVERIFY(!refunded.ok());
        QCOMPARE(refunded.error().code, ErrorCode::Unavailable);
        QVERIFY(f.gateway.refundNos.isEmpty());
        const auto queried = f.resilient->queryRefund(request.paymentNo, request.refundNo);
        QVERIFY(!queried.ok());
        QCOMPARE(f.log.indexOf(QStringLiteral("gateway.queryRefund")), -1);
    }

    void replayOfAFailureIsTheSameFailure()
    {
        Fixture f;
        f.gateway.failing = true;
        const ConfirmRequest request = f.request(QStringLiteral("key-1"), f.token());
        const PaymentOutcome first = f.pipeline->confirm(request);
        QCOMPARE(first.code, PaymentOutcomeCode::GatewayUnavailable);
        f.gateway.failing = false;
        const PaymentOutcome again = f.pipeline->confirm(request);
        QCOMPARE(again.code, PaymentOutcomeCode::GatewayUnavailable);
        QCOMPARE(again.body, first.body);
        QVERIFY(again.replayed);
    }

    void sameKeyDifferentBodyIsRefused()
    {
        Fixture f;
        (void)f.pipeline->confirm(f.request(QStringLiteral("key-1"), f.token()));
        ConfirmRequest other = f.request(QStringLiteral("key-1"), f.token());
        other.channel = Channel::Alipay;
        const PaymentOutcome out = f.pipeline->confirm(other);
        QCOMPARE(out.code, PaymentOutcomeCode::IdempotencyKeyReused);
        QCOMPARE(out.layer, Layer::IdempotencyKey);
        QCOMPARE(json(out.body)[QStringLiteral("error")][QStringLiteral("code")].toString(),
                 QStringLiteral("idempotency_key_reused"));
    }

    void sameKeyWhileInFlightAnswersInProgress()
    {
        Fixture f;
        const ConfirmRequest request = f.request(QStringLiteral("key-1"), f.token());
        // The first request is running (its in_flight record exists, not completed).
        QVERIFY(f.idempotency.begin(kUser, request.idempotencyKey, confirmFingerprint(request), 0).ok());
        const PaymentOutcome out = f.pipeline->confirm(request);
        QCOMPARE(out.code, PaymentOutcomeCode::RequestInProgress);
        QCOMPARE(out.layer, Layer::IdempotencyKey);
        QVERIFY(out.retryAfterSeconds.has_value());
        QCOMPARE(f.gateway.createCalls, 0);
    }

    void idempotencyKeyValidator_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<IdempotencyKeyCheck>("expected");
        QTest::newRow("empty") << QString() << IdempotencyKeyCheck::Missing;
        QTest::newRow("one char") << QStringLiteral("a") << IdempotencyKeyCheck::Valid;
        QTest::newRow("uuid") << QStringLiteral("8e03978e-40d5-43e8-bc93-6894a57f9324") << IdempotencyKeyCheck::Valid;
        QTest::newRow("printable punctuation") << QStringLiteral("a b~!{}") << IdempotencyKeyCheck::Valid;
        QTest::newRow("255") << QString(255, QLatin1Char('k')) << IdempotencyKeyCheck::Valid;
        QTest::newRow("256") << QString(256, QLatin1Char('k')) << IdempotencyKeyCheck::Invalid;
        QTest::newRow("tab") << QStringLiteral("a\tb") << IdempotencyKeyCheck::Invalid;
        QTest::newRow("newline") << QStringLiteral("a\nb") << IdempotencyKeyCheck::Invalid;
        QTest::newRow("DEL") << QStringLiteral("a\x7f") << IdempotencyKeyCheck::Invalid;
        QTest::newRow("non-ASCII") << QStringLiteral("cl\u00e9") << IdempotencyKeyCheck::Invalid;
    }
    void idempotencyKeyValidator()
    {
        QFETCH(QString, key);
        QFETCH(IdempotencyKeyCheck, expected);
        QCOMPARE(checkIdempotencyKey(key), expected);
    }

    void usedTokenIsADuplicateAndLeavesNoRecord()
    {
        Fixture f;
        const QString token = f.token();
        (void)f.pipeline->confirm(f.request(QStringLiteral("key-1"), token));
        const PaymentOutcome out = f.pipeline->confirm(f.request(QStringLiteral("key-2"), token));
        QCOMPARE(out.code, PaymentOutcomeCode::DuplicateRequest);
        QCOMPARE(out.layer, Layer::Token);
        QVERIFY(!f.idempotency.find(kUser, QStringLiteral("key-2")).value()); // released: retry allowed
        QCOMPARE(f.gateway.createCalls, 1);
    }

    void lockHeldAnswersInProgress()
    {
        Fixture f;
        auto held = f.keys->locks().acquire(QStringLiteral("lock:order:") + kOrder, 10s, kOrder);
        QVERIFY(held.ok() && held.value());
        const PaymentOutcome out = f.pipeline->confirm(f.request(QStringLiteral("key-1"), f.token()));
        QCOMPARE(out.code, PaymentOutcomeCode::RequestInProgress);
        QCOMPARE(out.layer, Layer::Lock);
        QVERIFY(out.retryAfterSeconds.has_value());
        QVERIFY(!f.idempotency.find(kUser, QStringLiteral("key-1")).value());
        QCOMPARE(f.orderStatus(), OrderStatus::Pending);
        QCOMPARE(f.log.indexOf(QStringLiteral("begin")), -1); // no transaction was started
    }

    void liveRecordAnswersDuplicate()
    {
        Fixture f;
        const PaymentOutcome first = f.pipeline->confirm(f.request(QStringLiteral("key-1"), f.token()));
        const PaymentOutcome out = f.pipeline->confirm(f.request(QStringLiteral("key-2"), f.token()));
        QCOMPARE(out.code, PaymentOutcomeCode::DuplicatePayment);
        QCOMPARE(out.layer, Layer::UniqueIndex);
        const QJsonObject body = json(out.body);
        QCOMPARE(body.value(QStringLiteral("duplicate")).toBool(), true);
        QCOMPARE(body.value(QStringLiteral("payment_no")).toString(),
                 json(first.body).value(QStringLiteral("payment_no")).toString());
        QCOMPARE(f.gateway.createCalls, 1);
        QCOMPARE(f.payments.state().records.size(), size_t(1));
    }

    void orderNotPendingIsAStateConflict()
    {
        Fixture f;
        f.payments.addOrder(kOrder, kUser, OrderStatus::Paid);
        const PaymentOutcome out = f.pipeline->confirm(f.request(QStringLiteral("key-1"), f.token()));
        QCOMPARE(out.code, PaymentOutcomeCode::OrderStateConflict);
        QCOMPARE(out.layer, Layer::StateMachine);
        QCOMPARE(json(out.body)[QStringLiteral("error")][QStringLiteral("status")].toString(), QStringLiteral("PAID"));
        QVERIFY(f.payments.state().records.empty()); // the record insert rolled back with it
        QCOMPARE(f.gateway.createCalls, 0);
    }

    void orderOfAnotherUserIsRefused()
    {
        Fixture f;
        ConfirmRequest request{20000, QStringLiteral("key-1"), f.token(20000), kOrder, Channel::WeChat};
        const PaymentOutcome out = f.pipeline->confirm(request);
        QCOMPARE(out.code, PaymentOutcomeCode::OrderNotYours);
        QVERIFY(!f.idempotency.find(20000, QStringLiteral("key-1")).value());
        QCOMPARE(f.orderStatus(), OrderStatus::Pending);
    }

    void gatewayFailureRevertsAndALaterConfirmReusesTheRecord_data()
    {
        QTest::addColumn<int>("platformState"); // what the query says about the failed attempt
        QTest::addColumn<QString>("platformCodeUrl");
        QTest::addColumn<int>("expectedCreateCalls");
        // the failed attempt made 3 create calls (retry bound)
        QTest::newRow("platform never saw it: create again") << int(GatewayTradeState::NotFound) << QString() << 4;
        QTest::newRow("platform has it unpaid with a code_url: no create")
            << int(GatewayTradeState::NotPaid) << QStringLiteral("weixin://from-query") << 3;
        QTest::newRow("platform says paid: no create") << int(GatewayTradeState::Paid) << QString() << 3;
        QTest::newRow("platform closed it: create under a new payment_no")
            << int(GatewayTradeState::Closed) << QString() << 4;
    }
    void gatewayFailureRevertsAndALaterConfirmReusesTheRecord()
    {
        QFETCH(int, platformState);
        QFETCH(QString, platformCodeUrl);
        QFETCH(int, expectedCreateCalls);
        Fixture f;
        f.gateway.failing = true;
        const PaymentOutcome failed = f.pipeline->confirm(f.request(QStringLiteral("key-1"), f.token()));
        QCOMPARE(failed.code, PaymentOutcomeCode::GatewayUnavailable);
        QCOMPARE(f.gateway.createCalls, 3); // retried to the bound
        QCOMPARE(f.orderStatus(), OrderStatus::Pending);
        QCOMPARE(f.record().status, PaymentRecordStatus::Failed);
        const QString paymentNo = f.record().paymentNo;

        f.gateway.failing = false;
        f.gateway.queryAnswer.state = GatewayTradeState(platformState);
        f.gateway.queryAnswer.codeUrl = platformCodeUrl;
        const PaymentOutcome token = f.issuer->issueToken(kUser, kOrder); // the order is PENDING again
        QCOMPARE(token.code, PaymentOutcomeCode::TokenIssued);
        const QString fresh = json(token.body).value(QStringLiteral("token")).toString();
        const PaymentOutcome out = f.pipeline->confirm(f.request(QStringLiteral("key-2"), fresh));
        QCOMPARE(out.code, PaymentOutcomeCode::Created);
        QCOMPARE(f.gateway.queries, 1);
        QVERIFY(f.log.indexOf(QStringLiteral("gateway.query"))
                    < f.log.events.lastIndexOf(QStringLiteral("gateway.create"))
                || expectedCreateCalls == 3);
        QCOMPARE(f.gateway.createCalls, expectedCreateCalls);
        if (GatewayTradeState(platformState) == GatewayTradeState::Closed) {
            // The same record, under a new number, and the trade created under it.
            QVERIFY(f.record().paymentNo != paymentNo);
            QVERIFY(f.record().paymentNo.startsWith(u"PN"));
            QCOMPARE(json(out.body).value(QStringLiteral("payment_no")).toString(), f.record().paymentNo);
            QVERIFY(json(out.body).value(QStringLiteral("code_url")).toString().endsWith(f.record().paymentNo));
        } else {
            QCOMPARE(f.record().paymentNo, paymentNo); // the same record, reused
        }
        QCOMPARE(f.record().attempt, 2);
        QCOMPARE(f.record().status, PaymentRecordStatus::Pending);
        QCOMPARE(f.orderStatus(), OrderStatus::Paying);
        if (!platformCodeUrl.isEmpty())
            QCOMPARE(json(out.body).value(QStringLiteral("code_url")).toString(), platformCodeUrl);
    }

    void openBreakerFailsFastWithoutCalling()
    {
        Fixture f;
        QVERIFY(f.breakers
                    ->setMode(QStringLiteral("gateway.wechat"), BreakerMode::ForcedOpen, QStringLiteral("alice"),
                              QStringLiteral("drill"), 600s)
                    .ok());
        const PaymentOutcome out = f.pipeline->confirm(f.request(QStringLiteral("key-1"), f.token()));
        QCOMPARE(out.code, PaymentOutcomeCode::GatewayUnavailable);
        QVERIFY(json(out.body)[QStringLiteral("error")][QStringLiteral("message")].toString().contains(
            QLatin1String("breaker open")));
        QCOMPARE(f.gateway.createCalls, 0);
        QCOMPARE(f.orderStatus(), OrderStatus::Pending);
        QCOMPARE(f.record().status, PaymentRecordStatus::Failed);
    }

    void tokenIssue_data()
    {
        QTest::addColumn<qint64>("user");
        QTest::addColumn<QString>("order");
        QTest::addColumn<int>("status");
        QTest::addColumn<PaymentOutcomeCode>("expected");
        QTest::newRow("pending, own order")
            << kUser << kOrder << int(OrderStatus::Pending) << PaymentOutcomeCode::TokenIssued;
        QTest::newRow("unknown order") << kUser << QStringLiteral("NOPE") << int(OrderStatus::Pending)
                                       << PaymentOutcomeCode::OrderNotFound;
        QTest::newRow("another user's") << qint64(1) << kOrder << int(OrderStatus::Pending)
                                        << PaymentOutcomeCode::OrderNotYours;
        QTest::newRow("paying") << kUser << kOrder << int(OrderStatus::Paying)
                                << PaymentOutcomeCode::OrderStateConflict;
    }
    void tokenIssue()
    {
        QFETCH(qint64, user);
        QFETCH(QString, order);
        QFETCH(int, status);
        QFETCH(PaymentOutcomeCode, expected);
        Fixture f;
        f.payments.addOrder(kOrder, kUser, OrderStatus(status));
        const PaymentOutcome out = f.issuer->issueToken(user, order);
        QCOMPARE(out.code, expected);
        if (expected == PaymentOutcomeCode::TokenIssued) {
            QCOMPARE(json(out.body).value(QStringLiteral("expires_in")).toInt(), 300);
            const QString token = json(out.body).value(QStringLiteral("token")).toString();
            QVERIFY(f.keys->tokens().consume(paymentTokenScope(user, order), token).value());
        }
    }
};

QTEST_GUILESS_MAIN(TestConfirmPipeline)
#include "tst_confirmpipeline.moc"
