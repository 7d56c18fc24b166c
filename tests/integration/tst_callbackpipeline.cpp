// The real callback pipeline on the real database (once per dialect), the real
// embedded key store and a fake verifier (the notification's fields travel as JSON in the
// body, so the worker's re-verification of the stored delivery decodes the same thing).
// Concurrency claims are made with runConcurrently; every storm prints its tally.

#include "fakes/jsonverifier.h"
#include "storagefixture.h"

#include "core/callback/callbackpipeline.h"
#include "core/callback/callbackworker.h"
#include "core/ports/clock.h"
#include "core/ports/notificationverifier.h"
#include "redis/embeddedkeystore.h"
#include "sql/sqlcallbackstore.h"
#include "sql/sqlorders.h"

#include <QJsonDocument>
#include <QJsonObject>
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

/// What a pipeline published through CallbackPipelineOptions::events, from any thread.
struct PublishedEvents {
    std::mutex mutex;
    QList<StreamEvent> events;
    EventSink sink()
    {
        return [this](const StreamEvent &event) {
            std::lock_guard guard(mutex);
            events.append(event);
        };
    }
    QList<StreamEvent> ofKind(const QString &kind)
    {
        std::lock_guard guard(mutex);
        QList<StreamEvent> out;
        for (const StreamEvent &e : std::as_const(events)) {
            if (e.kind == kind)
                out.append(e);
        }
        return out;
    }
};

} // namespace

namespace {

constexpr qint64 kUser = 10086;
constexpr qint64 kAmount = 9900;
const QString kMchId = QStringLiteral("1900000001");

RawDelivery deliveryOf(const QString &payNo, const QString &orderNo, qint64 amount = kAmount, bool forged = false)
{
    RawDelivery raw;
    raw.channel = Channel::WeChat;
    raw.headers = {{QByteArray("Wechatpay-Serial"), QByteArray("PUB_KEY_ID_0001")}};
    if (forged)
        raw.headers.append({QByteArray("X-Forged"), QByteArray("1")});
    raw.body = QJsonDocument(QJsonObject{{QStringLiteral("pay_no"), payNo},
                                         {QStringLiteral("out_trade_no"), orderNo},
                                         {QStringLiteral("amount"), amount},
                                         {QStringLiteral("currency"), QStringLiteral("CNY")},
                                         {QStringLiteral("mchid"), kMchId},
                                         {QStringLiteral("state"), QStringLiteral("SUCCESS")}})
                   .toJson(QJsonDocument::Compact);
    raw.receivedAtMs = QDateTime::currentMSecsSinceEpoch();
    return raw;
}

QString labelOf(const CallbackOutcome &out)
{
    return callbackOutcomeName(out.code) + QLatin1Char('@') + layerName(out.layer) + QLatin1Char('(') + out.note
           + QLatin1Char(')');
}

thread_local QString t_tag;

struct EventLog {
    std::mutex mutex;
    QStringList events;
    void add(const QString &event)
    {
        std::lock_guard guard(mutex);
        events.append(t_tag.isEmpty() ? event : t_tag + QLatin1Char(':') + event);
    }
    QStringList of(const QString &tag)
    {
        std::lock_guard guard(mutex);
        QStringList out;
        for (const QString &e : events) {
            if (e.startsWith(tag + QLatin1Char(':')))
                out.append(e.mid(tag.size() + 1));
        }
        return out;
    }
};

/// The answers CallbackPipeline::handleFromMemory() gave, from whichever thread gave them
/// (the group commit's writer), tallied by labelOf().
struct AsyncAnswers {
    std::mutex mutex;
    std::condition_variable cv;
    std::map<QString, int> tally;
    int answered = 0;

    CallbackPipeline::Answer answer()
    {
        return [this](const CallbackOutcome &out) {
            std::lock_guard guard(mutex);
            ++tally[labelOf(out)];
            ++answered;
            cv.notify_all();
        };
    }
    int count()
    {
        std::lock_guard guard(mutex);
        return answered;
    }
    int of(const QString &label)
    {
        std::lock_guard guard(mutex);
        return tally[label];
    }
    bool waitFor(int expected)
    {
        std::unique_lock lock(mutex);
        return cv.wait_for(lock, 30s, [&] { return answered >= expected; });
    }
    QString describe()
    {
        std::lock_guard guard(mutex);
        QString printed = QStringLiteral("  %1 answers\n").arg(answered);
        for (const auto &[label, n] : tally)
            printed += QStringLiteral("  %1: %2\n").arg(label).arg(n);
        return printed;
    }
};

/// A one-shot signal between threads, with a timeout.
struct Signal {
    std::mutex mutex;
    std::condition_variable cv;
    bool raised = false;
    void raise()
    {
        std::lock_guard guard(mutex);
        raised = true;
        cv.notify_all();
    }
    bool wait(std::chrono::milliseconds timeout)
    {
        std::unique_lock guard(mutex);
        return cv.wait_for(guard, timeout, [&] { return raised; });
    }
};

/// The real store, counting the calls that each are a transaction of their own: how many
/// commits a delivery costs.
class CountingCallbackStore final : public CallbackStore {
public:
    explicit CountingCallbackStore(CallbackStore &inner) : m_inner(inner) {}
    std::atomic<int> appendDeliveryCalls{0}, appendDeliveriesCalls{0}, decideDeliveryCalls{0}, insertAcceptedCalls{0},
        attachDeliveryCalls{0}, raiseFindingCalls{0}, transactions{0};
    int commits() const
    {
        return appendDeliveryCalls + appendDeliveriesCalls + decideDeliveryCalls + insertAcceptedCalls
               + attachDeliveryCalls + raiseFindingCalls + transactions;
    }
    QString describe() const
    {
        return QStringLiteral("appendDelivery %1, appendDeliveries %2, decideDelivery %3, insertAccepted %4, "
                              "attachDelivery %5, raiseFinding %6, inTransaction %7")
            .arg(appendDeliveryCalls.load())
            .arg(appendDeliveriesCalls.load())
            .arg(decideDeliveryCalls.load())
            .arg(insertAcceptedCalls.load())
            .arg(attachDeliveryCalls.load())
            .arg(raiseFindingCalls.load())
            .arg(transactions.load());
    }

    Result<std::optional<CallbackOrder>> findOrderForPayment(const QString &paymentNo) override
    {
        return m_inner.findOrderForPayment(paymentNo);
    }
    Result<qint64> appendDelivery(const DeliveryRecord &delivery) override
    {
        ++appendDeliveryCalls;
        return m_inner.appendDelivery(delivery);
    }
    Result<QList<qint64>> appendDeliveries(const QList<DeliveryRecord> &deliveries) override
    {
        ++appendDeliveriesCalls;
        return m_inner.appendDeliveries(deliveries);
    }
    Result<void> decideDelivery(qint64 id, Layer layer, int httpStatus, const QString &outcome) override
    {
        ++decideDeliveryCalls;
        return m_inner.decideDelivery(id, layer, httpStatus, outcome);
    }
    Result<std::optional<RawDelivery>> rawDelivery(qint64 id) override { return m_inner.rawDelivery(id); }
    Result<LogInsert> insertAccepted(const AcceptedCallback &row) override
    {
        ++insertAcceptedCalls;
        return m_inner.insertAccepted(row);
    }
    Result<bool> attachDelivery(Channel channel, const QString &payNo, qint64 deliveryId) override
    {
        ++attachDeliveryCalls;
        return m_inner.attachDelivery(channel, payNo, deliveryId);
    }
    Result<QList<AcceptedCallback>> listAccepted(qint64 createdBeforeMs, int limit) override
    {
        return m_inner.listAccepted(createdBeforeMs, limit);
    }
    Result<bool> raiseFinding(const CallbackFinding &finding) override
    {
        ++raiseFindingCalls;
        return m_inner.raiseFinding(finding);
    }
    Result<void> inTransaction(const std::function<Result<void>(CallbackTransaction &)> &work) override
    {
        ++transactions;
        return m_inner.inTransaction(work);
    }

private:
    CallbackStore &m_inner;
};

} // namespace

class TestCallbackPipeline : public QObject {
    Q_OBJECT
private:
    MigratedDatabase m_db;
    std::unique_ptr<sql::SqlFenceEpochSource> m_epochs;
    std::unique_ptr<sql::SqlCallbackStore> m_store;
    std::unique_ptr<sql::SqlCallbackModeStore> m_modes;
    JsonVerifier m_verifier{kMchId}; ///< reads the mchid of deliveryOf()'s body
    SystemClock m_clock;
    int m_serial = 0;

    sql::Database &db() { return *m_db.database; }

    qint64 count(const QString &sql, const QVariantList &binds = {}) { return countRowsOrWarn(db(), sql, binds); }

    /// A PENDING order for one SKU with `stock` in store, a coupon and points owed.
    QString newOrder(const QString &stem, qint64 stock, qint64 qty = 2)
    {
        const QString orderNo =
            QStringLiteral("%1-%2-%3").arg(stem).arg(++m_serial).arg(QDateTime::currentMSecsSinceEpoch());
        const QString skuId = QStringLiteral("SKU-") + orderNo;
        auto made = db().write([&](sql::Session &session) -> Result<void> {
            auto done = session.exec(QStringLiteral("INSERT INTO skus (sku_id, stock, updated_at) VALUES (?, ?, ?)"),
                                     {skuId, stock, QDateTime::currentMSecsSinceEpoch()});
            if (!done)
                return done.error();
            return {};
        });
        if (!made.ok())
            qWarning() << "sku not made:" << made.error().internalMessage;
        createOrder(db(), rewardedOrder(orderNo, kUser, kAmount, skuId, qty));
        return orderNo;
    }

    qint64 stockOf(const QString &orderNo)
    {
        auto read = db().read([&](sql::Session &session) -> Result<qint64> {
            auto q = session.exec(QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"),
                                  {QString(QStringLiteral("SKU-") + orderNo)});
            if (!q)
                return q.error();
            return q.value().next() ? q.value().value(0).toLongLong() : qint64(-1);
        });
        return read.ok() ? read.value() : -1;
    }

    struct Effects {
        qint64 paid, stockLog, coupons, points, outbox;
    };
    Effects effectsOf(const QString &orderNo)
    {
        return {count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'"), {orderNo}),
                count(QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {orderNo}),
                count(QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_no = ?"), {orderNo}),
                count(QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_no = ?"), {orderNo}),
                count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?"), {orderNo})};
    }

    /// The order is PAID with each effect once; stockAfter: what its SKU holds then (-1:
    /// not checked). Callers check QTest::currentTestFailed() before going on.
    void verifyPaidOnce(const QString &orderNo, qint64 stockAfter)
    {
        const Effects e = effectsOf(orderNo);
        QCOMPARE(e.paid, qint64(1));
        QCOMPARE(e.stockLog, qint64(1));
        if (stockAfter >= 0)
            QCOMPARE(stockOf(orderNo), stockAfter);
        QCOMPARE(e.coupons, qint64(1));
        QCOMPARE(e.points, qint64(1));
        QCOMPARE(e.outbox, qint64(1));
    }

    /// One processed log row for `payNo`, and `deliveries` delivery rows.
    void verifyLogRowAndDeliveries(const QString &payNo, qint64 deliveries)
    {
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                  {payNo}),
            qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ?"), {payNo}),
                 deliveries);
    }

    std::unique_ptr<redis::EmbeddedKeyStore> keyStore()
    {
        auto keys = redis::EmbeddedKeyStore::create(*m_epochs);
        if (!keys.ok()) {
            qWarning() << "no key store:" << keys.error().internalMessage;
            return nullptr;
        }
        return std::move(keys).value();
    }

    CallbackPipelineOptions options(EventLog *log = nullptr)
    {
        CallbackPipelineOptions o;
        o.weChatMchId = kMchId;
        o.qaEnabled = true;
        o.modeCacheMs = 0;
        o.agentId = QStringLiteral("agent-a");
        o.httpStatusOf = [](CallbackOutcomeCode code) {
            switch (code) {
            case CallbackOutcomeCode::Success: return 200;
            case CallbackOutcomeCode::BadSignature: return 401;
            case CallbackOutcomeCode::InvalidNotification:
            case CallbackOutcomeCode::ContentMismatch:
            case CallbackOutcomeCode::UnknownOrder: return 400;
            default: return 500;
            }
        };
        if (log)
            o.onEvent = [log](const QString &e) { log->add(e); };
        return o;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_db.start(), m_db.error());
        m_epochs = std::make_unique<sql::SqlFenceEpochSource>(db());
        m_store = std::make_unique<sql::SqlCallbackStore>(db());
        m_modes = std::make_unique<sql::SqlCallbackModeStore>(db());
    }

    void fiftyIdenticalNotifications_data()
    {
        QTest::addColumn<QStringList>("disabled");
        QTest::addColumn<int>("lockWaitMs");
        QTest::addColumn<bool>("mustDetectDuplicates");
        QTest::newRow("all layers") << QStringList{} << 0 << false;
        QTest::newRow("lock disabled") << QStringList{QStringLiteral("lock")} << 0 << false;
        QTest::newRow("unique_index disabled") << QStringList{QStringLiteral("unique_index")} << 0 << false;
        // Proof that the test can fail: the stale read of the classic race, a lock that
        // waits (so every stale reader gets its turn) and no key anywhere.
        QTest::newRow("state_machine+unique_index+side_effect disabled")
            << QStringList{QStringLiteral("state_machine"), QStringLiteral("unique_index"),
                           QStringLiteral("side_effect")}
            << 5000 << true;
    }

    void fiftyIdenticalNotifications()
    {
        QFETCH(QStringList, disabled);
        QFETCH(int, lockWaitMs);
        QFETCH(bool, mustDetectDuplicates);
        auto keys = keyStore();
        QVERIFY(keys);
        CallbackPipelineOptions o = options();
        o.lockWait = std::chrono::milliseconds(lockWaitMs);
        // For the proof row: every delivery reads the order before any of them goes on (a
        // per-thread connection opens slowly on PostgreSQL, which would otherwise let the
        // first pay before the others have read at all).
        std::mutex readMutex;
        std::condition_variable allRead;
        int readers = 0;
        if (mustDetectDuplicates) {
            o.testHook = [&](CallbackHookPoint point, const CallbackHookContext &) {
                if (point == CallbackHookPoint::AfterContentChecks) {
                    std::unique_lock guard(readMutex);
                    if (++readers >= 50)
                        allRead.notify_all();
                    allRead.wait_for(guard, 5s, [&] { return readers >= 50; });
                }
                return CallbackHookAction::Continue;
            };
        }
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, o);
        auto switches = CallbackLayerSwitches::fromNames(disabled);
        QVERIFY(switches.ok());
        QVERIFY(pipeline.setSwitches(switches.value()).ok());

        const qint64 stock = 100, qty = 2;
        const QString orderNo = newOrder(QStringLiteral("STORM"), stock, qty);
        const QString payNo = QStringLiteral("4200") + QString::number(QDateTime::currentMSecsSinceEpoch());
        const RawDelivery raw = deliveryOf(payNo, orderNo);

        std::mutex mutex;
        std::map<QString, int> tally, failures;
        QStringList unexpected;
        runConcurrently(50, [&](int) {
            CallbackOutcome out;
            for (int attempt = 0; attempt < 300; ++attempt) { // the platform re-sends until SUCCESS
                out = pipeline.handle(raw);
                if (out.code != CallbackOutcomeCode::Unavailable)
                    break;
                {
                    std::lock_guard guard(mutex);
                    ++failures[labelOf(out)];
                }
                std::this_thread::sleep_for(20ms);
            }
            std::lock_guard guard(mutex);
            ++tally[labelOf(out)];
            if (!out.success())
                unexpected.append(labelOf(out) + QLatin1Char(' ') + out.message);
            // Rule 8: a SUCCESS decided by the lock needs a durable row behind it.
            if (out.success() && out.layer == Layer::Lock && !out.durable)
                unexpected.append(QStringLiteral("SUCCESS at the lock without a durable row"));
        });

        QString printed;
        for (const auto &[label, n] : tally)
            printed += QStringLiteral("  final %1: %2\n").arg(label).arg(n);
        for (const auto &[label, n] : failures)
            printed += QStringLiteral("  retried after %1: %2\n").arg(label).arg(n);
        qInfo().noquote() << "tally of 50 identical notifications on" << dialectName(dialectUnderTest()) << "with"
                          << (disabled.isEmpty() ? QStringLiteral("all layers")
                                                 : disabled.join(QLatin1Char(',')) + QStringLiteral(" disabled"))
                          << ":\n"
                          << printed;
        QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join(QLatin1Char('\n'))));

        const Effects e = effectsOf(orderNo);
        const qint64 extra = (e.stockLog - 1) + (e.coupons - 1) + (e.points - 1)
                             + (stock - qty - stockOfOrder(orderNo, stock));
        qInfo().noquote() << QStringLiteral(
                                 "  effects: stock_log %1, coupons %2, points %3, outbox %4, stock %5 (from %6)")
                                 .arg(e.stockLog)
                                 .arg(e.coupons)
                                 .arg(e.points)
                                 .arg(e.outbox)
                                 .arg(stockOf(orderNo))
                                 .arg(stock);
        if (mustDetectDuplicates) {
            QVERIFY2(extra > 0, "with state_machine, unique_index and side_effect disabled the storm must pay twice");
            return;
        }
        verifyPaidOnce(orderNo, stock - qty);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(tally[QStringLiteral("success@none(processed)")], 1);
        int byNamedLayer = 0;
        for (const auto &[label, n] : tally) {
            if (label.startsWith(QLatin1String("success@")) && !label.startsWith(QLatin1String("success@none")))
                byNamedLayer += n;
        }
        QCOMPARE(byNamedLayer, 49);
        if (!disabled.contains(QStringLiteral("unique_index"))) {
            QCOMPARE(
                count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                      {payNo}),
                qint64(1));
        }
        // Every delivery verified and recorded; the body kept by each except the copies the
        // seen set answered (the processed delivery's body is the one kept).
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ? AND verified = 1 "
                                      "AND (raw_body IS NOT NULL) = (error_code <> 'seen_processed')"),
                       {payNo}),
                 count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ?"), {payNo}));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ? AND raw_body IS NOT NULL "
                                 "AND error_code = 'processed'"),
                  {payNo}),
            qint64(1));
    }

    // The seen set answers copies of a processed payment; their delivery rows ride group
    // commits. Every SUCCESS has its row on disk, decided at the unique index, and there
    // are fewer commits than rows. Also: a forged copy is recorded through the same writer.
    void copiesAfterThePaymentShareCommitsAndEachHasItsRow()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock,
                                  options());
        const qint64 stock = 10, qty = 1;
        const QString orderNo = newOrder(QStringLiteral("GROUP"), stock, qty);
        const QString payNo = QStringLiteral("4300") + QString::number(QDateTime::currentMSecsSinceEpoch());
        const RawDelivery raw = deliveryOf(payNo, orderNo);
        const CallbackOutcome first = pipeline.handle(raw);
        QVERIFY2(first.success() && first.layer == Layer::None, qPrintable(labelOf(first)));

        constexpr int threads = 16, perThread = 25;
        std::mutex mutex;
        std::map<QString, int> tally;
        runConcurrently(threads, [&](int t) {
            for (int i = 0; i < perThread; ++i) {
                const CallbackOutcome out = pipeline.handle(t == 0 && i == 0 ? deliveryOf(payNo, orderNo, kAmount, true)
                                                                             : raw);
                std::lock_guard guard(mutex);
                ++tally[labelOf(out)];
            }
        });
        QString printed;
        for (const auto &[label, n] : tally)
            printed += QStringLiteral("  %1: %2\n").arg(label).arg(n);
        const quint64 rows = pipeline.decidedDeliveries().rowsWritten();
        const quint64 commits = pipeline.decidedDeliveries().batchesWritten();
        qInfo().noquote() << threads * perThread << "copies on" << dialectName(dialectUnderTest()) << ":" << rows
                          << "decided rows in" << commits << "commits\n"
                          << printed;
        const int answeredSeen = tally[QStringLiteral("success@unique_index(seen_processed)")];
        QCOMPARE(answeredSeen, threads * perThread - 1);
        QCOMPARE(tally[QStringLiteral("bad_signature@rejected(bad_signature)")], 1);
        // Every answer has its own row: the seen copies decided at the unique index and
        // the first delivery's under the pay_no; the forged one's row names none (an
        // unverified body names nothing) but went through the same writer.
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ? AND layer = 'unique_index' "
                                 "AND http_status = 200 AND error_code = 'seen_processed'"),
                  {payNo}),
            qint64(answeredSeen));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ?"), {payNo}),
                 qint64(answeredSeen + 1));
        QCOMPARE(rows, quint64(answeredSeen + 1)); // the seen copies and the forged one
        QVERIFY2(commits < rows, qPrintable(QStringLiteral("%1 commits for %2 rows").arg(commits).arg(rows)));
        verifyPaidOnce(orderNo, stock - qty);
    }

    // handleFromMemory, the HTTP event loop's try: it takes only what memory answers (bytes
    // verified before, the pay_no seen processed) and answers that as handle() would, each
    // copy with its own row; everything else it leaves untouched for handle().
    void copiesAnsweredFromMemoryAreAnsweredAsHandleWould()
    {
        AsyncAnswers answers; // outlives the pipelines, whose writers answer into it
        auto keys = keyStore();
        QVERIFY(keys);
        const JsonVerifier remembering(kMchId, true);
        CallbackPipeline pipeline(remembering, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock,
                                  options());
        const qint64 stock = 10, qty = 1;
        const QString orderNo = newOrder(QStringLiteral("MEMORY"), stock, qty);
        const QString payNo = QStringLiteral("4400") + QString::number(QDateTime::currentMSecsSinceEpoch());
        const RawDelivery raw = deliveryOf(payNo, orderNo);

        auto fromMemory = [&](CallbackPipeline &on, const RawDelivery &delivery) {
            return on.handleFromMemory(delivery, answers.answer());
        };
        QVERIFY2(!fromMemory(pipeline, raw), "bytes never verified were taken");
        const CallbackOutcome first = pipeline.handle(raw);
        QVERIFY2(first.success() && first.layer == Layer::None, qPrintable(labelOf(first)));

        // Bytes verified whose pay_no was never processed: an amount the order does not have.
        const QString otherPayNo = payNo + QStringLiteral("9");
        const RawDelivery mismatched = deliveryOf(otherPayNo, orderNo, kAmount + 1);
        QCOMPARE(pipeline.handle(mismatched).code, CallbackOutcomeCode::ContentMismatch);
        QVERIFY2(remembering.verifyFromMemory(mismatched, true, 0).has_value(), "the fake did not remember");
        QVERIFY2(!fromMemory(pipeline, mismatched), "a pay_no never processed was taken");
        // Other bytes for the processed pay_no (an amount it did not pay): verified in full by handle().
        QVERIFY2(!fromMemory(pipeline, deliveryOf(payNo, orderNo, kAmount + 2)), "bytes never verified were taken");
        // The unique index off (QA): the seen set does not answer.
        QVERIFY(pipeline.setSwitches(CallbackLayerSwitches::fromNames({QStringLiteral("unique_index")}).value()).ok());
        QVERIFY2(!fromMemory(pipeline, raw), "taken with the unique index off");
        QVERIFY(pipeline.setSwitches({}).ok());
        // A test hook may pause: never on the event loop.
        CallbackPipelineOptions hooked = options();
        hooked.testHook = [](CallbackHookPoint, const CallbackHookContext &) { return CallbackHookAction::Continue; };
        CallbackPipeline withHook(remembering, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock,
                                  hooked);
        QVERIFY2(!fromMemory(withHook, raw), "taken with a test hook");
        QCOMPARE(answers.count(), 0); // nothing declined was answered

        constexpr int threads = 8, perThread = 25;
        std::atomic<int> taken{0};
        runConcurrently(threads, [&](int) {
            for (int i = 0; i < perThread; ++i)
                taken += fromMemory(pipeline, raw) ? 1 : 0;
        });
        // Bytes verified before, now outside the time window: refused as handle() refuses them.
        RawDelivery late = raw;
        late.headers.append({QByteArray("X-Outside-Window"), QByteArray("1")});
        QVERIFY2(fromMemory(pipeline, late), "a copy outside the window was not taken");
        QCOMPARE(taken.load(), threads * perThread);
        QVERIFY2(answers.waitFor(threads * perThread + 1), qPrintable(answers.describe()));
        qInfo().noquote() << "answered from memory on" << dialectName(dialectUnderTest()) << ":\n"
                          << answers.describe();
        QCOMPARE(answers.of(QStringLiteral("success@unique_index(seen_processed)")), threads * perThread);
        QCOMPARE(answers.of(QStringLiteral("bad_signature@rejected(bad_signature)")), 1);
        QCOMPARE(pipeline.answeredFromMemory(), qint64(threads * perThread + 1));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ? AND layer = 'unique_index' "
                                 "AND http_status = 200 AND error_code = 'seen_processed'"),
                  {payNo}),
            qint64(threads * perThread));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ?"), {payNo}),
                 qint64(threads * perThread + 1));
        verifyPaidOnce(orderNo, stock - qty);
    }

    // A batch is written as multi-row INSERTs (103 rows: 64, 32, 4, 2 and 1 a statement)
    // and each row must get its own id back, in order. On MariaDB also where InnoDB would
    // not hand out consecutive ids (auto_increment_increment 2 on that connection): one
    // INSERT a row then, and the ids step by 2.
    void aBatchOfDeliveriesGetsEachRowsOwnId_data()
    {
        QTest::addColumn<bool>("steppedIds");
        QTest::newRow("one statement for many rows") << false;
        if (dialectUnderTest() == Dialect::MariaDb)
            QTest::newRow("MariaDB, auto_increment_increment 2") << true;
    }

    void aBatchOfDeliveriesGetsEachRowsOwnId()
    {
        QFETCH(bool, steppedIds);
        const QString stamp = QString::number(QDateTime::currentMSecsSinceEpoch());
        QList<DeliveryRecord> rows;
        for (int i = 0; i < 103; ++i) {
            DeliveryRecord row;
            row.payNo = QStringLiteral("BATCH-%1-%2").arg(stamp).arg(i);
            row.verified = true;
            if (i % 2 == 0) // a body kept, or none (a seen copy's row)
                row.rawBody = "{\"i\":" + QByteArray::number(i) + '}';
            row.layer = Layer::UniqueIndex;
            row.httpStatus = 200;
            row.traceId = QStringLiteral("trace-%1-%2").arg(steppedIds).arg(i);
            rows.append(row);
        }
        Result<QList<qint64>> written = Error::make(ErrorCode::Internal, QStringLiteral("not run"));
        // A thread of its own: a connection of its own, whose session setting goes with it.
        std::thread writer([&] {
            if (steppedIds) {
                if (auto set = execSql(db(), QStringLiteral("SET SESSION auto_increment_increment = 2")); !set) {
                    written = set.error();
                    return;
                }
            }
            written = m_store->appendDeliveries(rows);
        });
        writer.join();
        QVERIFY2(written.ok(), qPrintable(written.ok() ? QString() : written.error().internalMessage));
        QCOMPARE(written.value().size(), rows.size());
        for (qsizetype i = 0; i < rows.size(); ++i) {
            QCOMPARE(firstValueText(db(), QStringLiteral("SELECT trace_id FROM callback_deliveries WHERE id = ?"),
                                    {written.value().at(i)}),
                     rows.at(i).traceId);
            if (steppedIds && i > 0)
                QCOMPARE(written.value().at(i) - written.value().at(i - 1), qint64(2));
        }
        QCOMPARE(count(QStringLiteral(
                           "SELECT COUNT(*) FROM callback_deliveries WHERE pay_no LIKE ? AND raw_body IS NOT NULL"),
                       {QStringLiteral("BATCH-%1-%").arg(stamp)}),
                 qint64(52));
    }

    void ghostOrdering_data()
    {
        QTest::addColumn<bool>("unlockBeforeCommit");
        QTest::addColumn<bool>("sideEffectDisabled");
        QTest::addColumn<int>("coupons");
        QTest::newRow("classic ghost: unlock before COMMIT") << true << true << 2;
        QTest::newRow("ghost ordering, side-effect key still on") << true << false << 1;
        QTest::newRow("payonce order: COMMIT before unlock") << false << true << 1;
    }

    void ghostOrdering()
    {
        QFETCH(bool, unlockBeforeCommit);
        QFETCH(bool, sideEffectDisabled);
        QFETCH(int, coupons);
        auto keys = keyStore();
        QVERIFY(keys);
        EventLog log;
        const QString orderNo = newOrder(QStringLiteral("GHOST"), 100, 1);
        const QString payNo = QStringLiteral("4201") + QString::number(QDateTime::currentMSecsSinceEpoch());
        const RawDelivery raw = deliveryOf(payNo, orderNo);

        Signal secondRead;
        std::atomic<bool> injected{false};
        std::thread second;
        CallbackOutcome secondOut;
        CallbackPipeline *self = nullptr;
        CallbackPipelineOptions o = options(&log);
        o.testHook = [&](CallbackHookPoint point, const CallbackHookContext &) {
            if (t_tag == QLatin1String("second") && point == CallbackHookPoint::AfterContentChecks)
                secondRead.raise(); // the second has read the order: now the first may COMMIT
            const CallbackHookPoint inject = unlockBeforeCommit ? CallbackHookPoint::BetweenUnlockAndCommit
                                                                : CallbackHookPoint::AfterUnlock;
            if (t_tag == QLatin1String("first") && point == inject && !injected.exchange(true)) {
                second = std::thread([&] {
                    t_tag = QStringLiteral("second");
                    secondOut = self->handle(raw); // a platform re-send 40 ms later
                });
                secondRead.wait(5s);
            }
            return CallbackHookAction::Continue;
        };
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, o);
        self = &pipeline;
        CallbackLayerSwitches sw;
        sw.disableStateMachine = true;
        sw.disableUniqueIndex = true;
        sw.disableSideEffect = sideEffectDisabled;
        sw.unlockBeforeCommit = unlockBeforeCommit;
        QVERIFY(pipeline.setSwitches(sw).ok());

        t_tag = QStringLiteral("first");
        const CallbackOutcome first = pipeline.handle(raw);
        t_tag.clear();
        if (second.joinable())
            second.join();
        QVERIFY(injected.load());
        QVERIFY2(first.success(), qPrintable(labelOf(first)));
        QVERIFY2(secondOut.success(), qPrintable(labelOf(secondOut)));
        const QStringList events = log.of(QStringLiteral("first"));
        qInfo().noquote() << "first delivery's events:" << events.join(QStringLiteral(" -> "))
                          << "; second:" << labelOf(secondOut) << "; coupons:" << effectsOf(orderNo).coupons;
        QCOMPARE(effectsOf(orderNo).coupons, qint64(coupons));
        const qsizetype commit = events.indexOf(QStringLiteral("commit"));
        const qsizetype unlock = events.indexOf(QStringLiteral("unlock"));
        QVERIFY(commit >= 0 && unlock >= 0);
        QCOMPARE(events.first(), QStringLiteral("lock"));
        if (unlockBeforeCommit)
            QVERIFY(unlock < commit);
        else
            QVERIFY2(commit < unlock, qPrintable(events.join(QLatin1Char(','))));
    }

    // A new notification whose pay lock is free costs one transaction: its delivery row
    // (decided), its log row (processed) and the paid transaction commit together. The
    // accepted-first way, measured the same way, costs four.
    void aNewDeliveryIsOneTransaction()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        QStringList printed;
        for (const bool oneCommit : {true, false}) {
            CountingCallbackStore counted(*m_store);
            CallbackPipelineOptions o = options();
            o.oneCommit = oneCommit;
            CallbackPipeline pipeline(m_verifier, counted, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, o);
            const QString orderNo = newOrder(QStringLiteral("ONE"), 10, 1);
            const QString payNo = QStringLiteral("4310%1").arg(oneCommit ? 1 : 2)
                                  + QString::number(QDateTime::currentMSecsSinceEpoch());
            const CallbackOutcome out = pipeline.handle(deliveryOf(payNo, orderNo));
            QCOMPARE(labelOf(out), QStringLiteral("success@none(processed)"));
            verifyPaidOnce(orderNo, 9);
            if (QTest::currentTestFailed())
                return;
            printed << QStringLiteral("%1: %2 commits (%3)")
                           .arg(oneCommit ? QStringLiteral("one commit") : QStringLiteral("accepted first"))
                           .arg(counted.commits())
                           .arg(counted.describe());
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries d JOIN pay_callback_log l "
                                          "ON l.delivery_id = d.id WHERE l.pay_no = ? AND l.status = 'processed' "
                                          "AND l.outcome = 'processed' AND d.layer = 'none' AND d.http_status = 200 "
                                          "AND d.error_code = 'processed' AND d.raw_body IS NOT NULL"),
                           {payNo}),
                     qint64(1));
            if (oneCommit) {
                QCOMPARE(counted.transactions.load(), 1);
                QCOMPARE(counted.commits(), 1);
                QCOMPARE(pipeline.oneCommitSettled(), qint64(1));
                QCOMPARE(pipeline.oneCommitFellBack(), qint64(0));
            } else {
                QCOMPARE(counted.commits(), 4);
                QCOMPARE(pipeline.oneCommitSettled(), qint64(0));
            }
        }
        qInfo().noquote() << "a new delivery on" << dialectName(dialectUnderTest()) << ":"
                          << printed.join(QStringLiteral("; "));
    }

    // A copy made its log row durable (accepted) while this delivery held the pay lock — or
    // an accept-only delivery did, or the patrol's query: the lock's holder finds the row in
    // its own transaction and finishes it there, in the same one commit.
    void theLockHolderFinishesAnAcceptedRow()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        CountingCallbackStore counted(*m_store);
        CallbackPipeline pipeline(m_verifier, counted, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock,
                                  options());
        const QString orderNo = newOrder(QStringLiteral("HOLDER"), 10, 1);
        const QString payNo = QStringLiteral("4320") + QString::number(QDateTime::currentMSecsSinceEpoch());
        DeliveryRecord copy;
        copy.channel = Channel::WeChat;
        copy.payNo = payNo;
        copy.orderNo = orderNo;
        copy.receivedAtMs = m_clock.nowMs();
        copy.verified = true;
        copy.rawBody = deliveryOf(payNo, orderNo).body;
        auto copyId = m_store->appendDelivery(copy);
        QVERIFY(copyId.ok());
        auto accepted = m_store->insertAccepted(
            AcceptedCallback{Channel::WeChat, payNo, orderNo, kAmount, copyId.value(), m_clock.nowMs(), orderNo});
        QVERIFY(accepted.ok() && accepted.value() == LogInsert::Inserted);

        const CallbackOutcome out = pipeline.handle(deliveryOf(payNo, orderNo));
        qInfo().noquote() << "holder over an accepted row:" << labelOf(out) << ";" << counted.describe();
        QCOMPARE(labelOf(out), QStringLiteral("success@none(processed)"));
        QCOMPARE(counted.commits(), 1);
        QCOMPARE(pipeline.oneCommitSettled(), qint64(1));
        verifyPaidOnce(orderNo, 9);
        if (QTest::currentTestFailed())
            return;
        verifyLogRowAndDeliveries(payNo, 2);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND delivery_id = ?"),
                       {payNo, copyId.value()}),
                 qint64(1));
    }

    // The seen set does not know the payment (another agent's embedded store, a restart),
    // its log row is processed: the one-commit transaction meets the row, rolls back
    // everything and answers the duplicate — no second effect, no finding touched.
    void aProcessedRowMakesTheCopyADuplicate()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        const QString orderNo = newOrder(QStringLiteral("PROCESSED"), 10, 1);
        const QString payNo = QStringLiteral("4330") + QString::number(QDateTime::currentMSecsSinceEpoch());
        {
            CallbackPipeline first(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock,
                                   options());
            QCOMPARE(labelOf(first.handle(deliveryOf(payNo, orderNo))), QStringLiteral("success@none(processed)"));
        }
        auto forgetful = keyStore(); // nothing seen
        QVERIFY(forgetful);
        CountingCallbackStore counted(*m_store);
        CallbackPipeline again(m_verifier, counted, *m_modes, forgetful->locks(), &forgetful->seenProcessed(), m_clock,
                               options());
        const CallbackOutcome out = again.handle(deliveryOf(payNo, orderNo));
        qInfo().noquote() << "copy of a processed payment, nothing seen:" << labelOf(out) << ";" << counted.describe();
        QCOMPARE(labelOf(out), QStringLiteral("success@unique_index(log_row_exists)"));
        QVERIFY(out.durable);
        QCOMPARE(again.oneCommitSettled(), qint64(0));
        QCOMPARE(again.oneCommitFellBack(), qint64(0));
        verifyPaidOnce(orderNo, 9);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ? AND layer = 'unique_index' "
                                 "AND error_code = 'log_row_exists' AND http_status = 200"),
                  {payNo}),
            qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE subject = ?"),
                       {QString(QStringLiteral("wechat:") + payNo)}),
                 qint64(0));
    }

    void pausedHolderIsFenced_data()
    {
        QTest::addColumn<bool>("oneCommit");
        QTest::newRow("accepted first: agent B's worker finishes A's row") << false;
        QTest::newRow("one commit: agent B pays the platform's re-send") << true;
    }

    // A holder paused past its lease (SIGSTOP, a GC pause) while another agent pays the
    // order under a newer token: the late holder's CAS is refused as stale (counted,
    // published). Accepted first, A's row is durable and B's worker finishes it; in one
    // commit, A wrote nothing — B pays the platform's re-send, and A, rolled back, is
    // answered by the accepted-first way from the durable row.
    void pausedHolderIsFenced()
    {
        QFETCH(bool, oneCommit);
        auto keys = keyStore();
        QVERIFY(keys);
        const QString orderNo = newOrder(QStringLiteral("FENCE"), 100, 1);
        const QString payNo = QStringLiteral("4202") + QString::number(QDateTime::currentMSecsSinceEpoch());
        Signal paused, otherDone;
        PublishedEvents published;
        CallbackPipelineOptions oa = options();
        oa.oneCommit = oneCommit;
        oa.lockTtl = 300ms;
        oa.events = published.sink();
        oa.testHook = [&](CallbackHookPoint point, const CallbackHookContext &ctx) {
            if (point == CallbackHookPoint::AfterLockBeforeBegin && ctx.lock && t_tag == QLatin1String("a")) {
                ctx.lock->stopRenewingForTest(); // SIGSTOP / a GC pause: the lease runs out
                paused.raise();
                otherDone.wait(20s);
            }
            return CallbackHookAction::Continue;
        };
        CallbackPipelineOptions ob = options();
        ob.lockTtl = 300ms;
        ob.agentId = QStringLiteral("agent-b");
        // Two agents over the same database and the same key store.
        CallbackPipeline agentA(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, oa);
        CallbackPipeline agentB(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, ob);
        CallbackWorker workerB(agentB, *m_store, *m_modes, m_clock, 0);

        CallbackOutcome a;
        std::thread holder([&] {
            t_tag = QStringLiteral("a");
            a = agentA.handle(deliveryOf(payNo, orderNo));
        });
        QVERIFY(paused.wait(10s));
        std::this_thread::sleep_for(800ms); // past A's lease
        QString byB;
        if (oneCommit) {
            QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"), {payNo}),
                     qint64(0));
            byB = labelOf(agentB.handle(deliveryOf(payNo, orderNo)));
        } else {
            byB = QStringLiteral("worker finished %1").arg(workerB.runOnce(1000).finished);
        }
        otherDone.raise();
        holder.join();
        qInfo().noquote() << "paused holder answered" << labelOf(a) << "; agent B:" << byB
                          << "; stale-token writes refused:" << agentA.staleFenceRefused();
        if (oneCommit) {
            QCOMPARE(byB, QStringLiteral("success@none(processed)"));
            QCOMPARE(labelOf(a), QStringLiteral("success@unique_index(log_row_exists)"));
            QCOMPARE(agentA.oneCommitFellBack(), qint64(1));
        } else {
            QCOMPARE(byB, QStringLiteral("worker finished 1"));
            QCOMPARE(a.note, QStringLiteral("stale_fence"));
        }
        QVERIFY(a.durable);
        QCOMPARE(agentA.staleFenceRefused(), qint64(1));
        // The refusal is published for the live stream, once per refused write.
        const QList<StreamEvent> stale = published.ofKind(streamevent::FenceStaleRefused);
        QCOMPARE(stale.size(), qsizetype(agentA.staleFenceRefused()));
        QCOMPARE(stale.first().subject, orderNo);
        QCOMPARE(stale.first().value, payNo);
        QCOMPARE(stale.first().actor, QStringLiteral("system:agent-a"));
        QVERIFY(stale.first().detail.value(QStringLiteral("fencing_token")).toInteger() > 0);
        verifyPaidOnce(orderNo, 99);
        if (QTest::currentTestFailed())
            return;
        verifyLogRowAndDeliveries(payNo, oneCommit ? 2 : 1);
    }

    void crashAfterDurableRowIsFinishedByTheWorker()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        const QString orderNo = newOrder(QStringLiteral("CRASH"), 100, 3);
        const QString payNo = QStringLiteral("4203") + QString::number(QDateTime::currentMSecsSinceEpoch());
        std::atomic<bool> crashed{false};
        CallbackPipelineOptions o = options();
        o.oneCommit = false; // the point between the log row and the paid transaction
        o.testHook = [&](CallbackHookPoint point, const CallbackHookContext &) {
            if (point == CallbackHookPoint::AfterLogRowDurable && !crashed.exchange(true))
                return CallbackHookAction::Abort; // the process dies here
            return CallbackHookAction::Continue;
        };
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, o);
        const CallbackOutcome out = pipeline.handle(deliveryOf(payNo, orderNo));
        QCOMPARE(out.note, QStringLiteral("aborted_by_hook"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'accepted'"),
                       {payNo}),
                 qint64(1));
        QCOMPARE(effectsOf(orderNo).paid, qint64(0));

        // "After restart": a new key store and pipeline; the worker finds the row.
        auto restarted = keyStore();
        QVERIFY(restarted);
        CallbackPipeline after(m_verifier, *m_store, *m_modes, restarted->locks(), &restarted->seenProcessed(), m_clock,
                               options());
        CallbackWorker worker(after, *m_store, *m_modes, m_clock, 0);
        const CallbackWorker::Report report = worker.runOnce(1000);
        QVERIFY(report.finished >= 1);
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                  {payNo}),
            qint64(1));
        verifyPaidOnce(orderNo, 97);
        if (QTest::currentTestFailed())
            return;
        // The platform's next re-send is a duplicate.
        const CallbackOutcome again = after.handle(deliveryOf(payNo, orderNo));
        QVERIFY(again.success());
        QCOMPARE(again.layer, Layer::UniqueIndex);
    }

    void doublePaymentOversoldAndMismatch()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        PublishedEvents published;
        CallbackPipelineOptions o = options();
        o.events = published.sink();
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, o);
        const QString stamp = QString::number(QDateTime::currentMSecsSinceEpoch());

        // A second, different pay_no for a PAID order.
        const QString paid = newOrder(QStringLiteral("DOUBLE"), 100, 1);
        QCOMPARE(labelOf(pipeline.handle(deliveryOf(QStringLiteral("P1-") + stamp, paid))),
                 QStringLiteral("success@none(processed)"));
        const CallbackOutcome twice = pipeline.handle(deliveryOf(QStringLiteral("P2-") + stamp, paid));
        QCOMPARE(labelOf(twice), QStringLiteral("success@state_machine(double_payment)"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND order_no = ?"),
                       {paid}),
                 qint64(1));
        // Published once it committed, with what an operator needs to act on it.
        const QList<StreamEvent> raised = published.ofKind(streamevent::FindingRaised);
        QCOMPARE(raised.size(), qsizetype(1));
        QCOMPARE(raised.first().value, QStringLiteral("double_payment"));
        QCOMPARE(raised.first().subject, QStringLiteral("wechat:P2-") + stamp);
        QCOMPARE(raised.first().actor, QStringLiteral("system:agent-a"));
        QCOMPARE(raised.first().detail.value(QStringLiteral("order_no")).toString(), paid);
        QCOMPARE(raised.first().detail.value(QStringLiteral("pay_no")).toString(), QStringLiteral("P2-") + stamp);
        const Effects e = effectsOf(paid);
        QCOMPARE(e.coupons, qint64(1));
        QCOMPARE(e.stockLog, qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND pay_no = ?"),
                       {paid, QString(QStringLiteral("P1-") + stamp)}),
                 qint64(1));

        // A payment for a CLOSED order.
        const QString closed = newOrder(QStringLiteral("CLOSED"), 100, 1);
        QVERIFY(db().write([&](sql::Session &s) -> Result<void> {
                        auto done = s.exec(QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?"),
                                           {closed});
                        if (!done)
                            return done.error();
                        return {};
                    })
                    .ok());
        QCOMPARE(labelOf(pipeline.handle(deliveryOf(QStringLiteral("P3-") + stamp, closed))),
                 QStringLiteral("success@state_machine(double_payment)"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND order_no = ?"),
                       {closed}),
                 qint64(1));
        QCOMPARE(effectsOf(closed).coupons, qint64(0));

        // Stock short: PAID, no stock_log, an oversold finding.
        const QString short_ = newOrder(QStringLiteral("OVERSOLD"), 1, 2);
        QCOMPARE(labelOf(pipeline.handle(deliveryOf(QStringLiteral("P4-") + stamp, short_))),
                 QStringLiteral("success@none(processed)"));
        const Effects s = effectsOf(short_);
        QCOMPARE(s.paid, qint64(1));
        QCOMPARE(s.stockLog, qint64(0));
        QCOMPARE(stockOf(short_), qint64(1));
        QCOMPARE(s.coupons, qint64(1));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'oversold' AND order_no = ?"), {short_}),
            qint64(1));

        // Amount mismatch: 400 FAIL, a finding, nothing else written.
        const QString wrong = newOrder(QStringLiteral("MISMATCH"), 100, 1);
        const QString wrongPay = QStringLiteral("P5-") + stamp;
        const CallbackOutcome mismatch = pipeline.handle(deliveryOf(wrongPay, wrong, kAmount - 1));
        QCOMPARE(mismatch.code, CallbackOutcomeCode::ContentMismatch);
        QCOMPARE(mismatch.layer, Layer::Rejected);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'amount_mismatch' AND order_no = ?"),
                       {wrong}),
                 qint64(1));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"), {wrongPay}),
                 qint64(0));
        QCOMPARE(count(QStringLiteral(
                           "SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PENDING' AND version = 0"),
                       {wrong}),
                 qint64(1));
        const Effects m = effectsOf(wrong);
        QCOMPARE(m.stockLog + m.coupons + m.points + m.outbox, qint64(0));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = ? AND layer = 'rejected' "
                                 "AND http_status = 400"),
                  {wrongPay}),
            qint64(1));

        // Unverified: metadata only, no body, nothing in pay_callback_log or the business tables.
        const qint64 before = count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE verified = 0"));
        const QString forgedOrder = newOrder(QStringLiteral("FORGED"), 100, 1);
        const CallbackOutcome forged = pipeline.handle(
            deliveryOf(QStringLiteral("P6-") + stamp, forgedOrder, kAmount, true));
        QCOMPARE(forged.code, CallbackOutcomeCode::BadSignature);
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE verified = 0 AND raw_body IS NULL "
                                 "AND layer = 'rejected' AND http_status = 401")),
            before + 1);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ?"), {forgedOrder}),
                 qint64(0));
        QCOMPARE(effectsOf(forgedOrder).paid, qint64(0));
    }

    void anotherPayNoWithANewerTokenIsADoublePayment()
    {
        // The order was paid by another pay_no whose holder had a newer fencing token than
        // this delivery's (another agent, a later epoch): the status no longer matches the
        // CAS's guard, so this is money received twice — not a stale writer to retry.
        auto keys = keyStore();
        QVERIFY(keys);
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock,
                                  options());
        const QString stamp = QString::number(QDateTime::currentMSecsSinceEpoch());
        const QString orderNo = newOrder(QStringLiteral("NEWER"), 100, 1);
        QVERIFY(db().write([&](sql::Session &s) -> Result<void> {
                        auto done = s.exec(
                            QStringLiteral("UPDATE orders SET status = 'PAID', pay_no = ?, paid_channel = "
                                           "'wechat', fence = ? WHERE order_no = ?"),
                            {QString(QStringLiteral("OTHER-") + stamp), qint64(1) << 62, orderNo});
                        if (!done)
                            return done.error();
                        return {};
                    })
                    .ok());
        const CallbackOutcome out = pipeline.handle(deliveryOf(QStringLiteral("LATE-") + stamp, orderNo));
        QCOMPARE(labelOf(out), QStringLiteral("success@state_machine(double_payment)")); // stale_fence before the fix
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM findings WHERE kind = 'double_payment' AND subject = ?"),
                       {QString(QStringLiteral("wechat:LATE-") + stamp)}),
                 qint64(1));
        QCOMPARE(
            count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? AND status = 'processed'"),
                  {QString(QStringLiteral("LATE-") + stamp)}),
            qint64(1));
        QCOMPARE(pipeline.staleFenceRefused(), qint64(0));
    }

    void acceptOnlyThenWorkerDrains()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock,
                                  options());
        CallbackWorker worker(pipeline, *m_store, *m_modes, m_clock, 0);
        // Drain what earlier tests may have left, so the counts below are this test's.
        (void)worker.runOnce(1000);
        QCOMPARE(m_modes->acceptedWaiting().value(), qint64(0));

        QVERIFY(m_modes
                    ->setMode(CallbackMode::AcceptOnly, QStringLiteral("alice"), QStringLiteral("incident 42"),
                              m_clock.nowMs())
                    .ok());
        QCOMPARE(m_modes->mode().value().mode, CallbackMode::AcceptOnly);
        QCOMPARE(m_modes->mode().value().actor, QStringLiteral("alice"));
        QStringList orders;
        const QString stamp = QString::number(QDateTime::currentMSecsSinceEpoch());
        for (int i = 0; i < 5; ++i) {
            orders.append(newOrder(QStringLiteral("ACCEPT"), 100, 1));
            const CallbackOutcome out = pipeline.handle(
                deliveryOf(QStringLiteral("PA%1-%2").arg(i).arg(stamp), orders.last()));
            QCOMPARE(labelOf(out), QStringLiteral("success@none(accept_only)"));
        }
        QCOMPARE(m_modes->acceptedWaiting().value(), qint64(5));
        const CallbackWorker::Report idle = worker.runOnce(1000);
        QVERIFY(idle.acceptOnly);
        QCOMPARE(idle.finished, 0);
        for (const QString &orderNo : orders)
            QCOMPARE(effectsOf(orderNo).paid, qint64(0));

        QVERIFY(m_modes->setMode(CallbackMode::Normal, QStringLiteral("alice"), QStringLiteral("over"), m_clock.nowMs())
                    .ok());
        const CallbackWorker::Report drained = worker.runOnce(1000);
        QCOMPARE(drained.finished, 5);
        QCOMPARE(m_modes->acceptedWaiting().value(), qint64(0));
        for (const QString &orderNo : orders) {
            const Effects e = effectsOf(orderNo);
            QCOMPARE(e.paid, qint64(1));
            QCOMPARE(e.coupons, qint64(1));
            QCOMPARE(e.outbox, qint64(1));
        }
    }

    void switchesNeedQa()
    {
        auto keys = keyStore();
        QVERIFY(keys);
        CallbackPipelineOptions o = options();
        o.qaEnabled = false;
        CallbackPipeline pipeline(m_verifier, *m_store, *m_modes, keys->locks(), &keys->seenProcessed(), m_clock, o);
        CallbackLayerSwitches sw;
        sw.disableLock = true;
        QCOMPARE(pipeline.setSwitches(sw).error().code, ErrorCode::Forbidden);
        QVERIFY(!CallbackLayerSwitches::fromNames({QStringLiteral("bogus")}).ok());
    }

private:
    qint64 stockOfOrder(const QString &orderNo, qint64) { return stockOf(orderNo); }
};

QTEST_GUILESS_MAIN(TestCallbackPipeline)
#include "tst_callbackpipeline.moc"
