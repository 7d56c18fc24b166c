// The dispatcher's rules on a fake store and a fake clock: outcomes per delivery result,
// exponential backoff with jitter, dead after N with the last error, the lease margin, and
// handlers chosen by event type.

#include "core/outbox/outboxdispatcher.h"
#include "core/ports/clock.h"
#include "core/ports/outboxstore.h"
#include "fakes/fakeclock.h"

#include <QTest>

#include <atomic>

using namespace payonce;
using namespace payonce::core;
using payonce::testsupport::FakeClock;

namespace {

class FakeStore final : public OutboxStore {
public:
    Result<QList<OutboxEvent>> claim(const QString &dispatcherId, int limit, qint64, qint64 claimedUntilMs) override
    {
        lastClaimUntil = claimedUntilMs;
        lastLimit = limit;
        QList<OutboxEvent> out = due.mid(0, limit);
        for (OutboxEvent &e : out)
            e.claimedBy = dispatcherId;
        due.remove(0, out.size());
        return out;
    }
    Result<int> complete(const QString &, const QList<OutboxOutcome> &outcomes, qint64) override
    {
        reported += outcomes;
        return int(outcomes.size()) - refuse;
    }
    Result<QList<OutboxEvent>> list(std::optional<OutboxStatus>, int) override { return QList<OutboxEvent>{}; }
    using OutboxStore::redrive;
    Result<OutboxEvent> redrive(qint64, qint64, const RedriveHook &) override
    {
        return Error::make(ErrorCode::NotFound, QStringLiteral("fake"));
    }

    QList<OutboxEvent> due;
    QList<OutboxOutcome> reported;
    qint64 lastClaimUntil = 0;
    int lastLimit = 0;
    int refuse = 0;
};

class ScriptedHandler final : public OutboxHandler {
public:
    explicit ScriptedHandler(bool succeed, FakeClock *clock = nullptr, qint64 takesMs = 0)
        : m_succeed(succeed), m_clock(clock), m_takesMs(takesMs)
    {
    }
    Result<void> deliver(const OutboxEvent &event) override
    {
        seen.append(event.eventId);
        if (m_clock)
            m_clock->advance(std::chrono::milliseconds(m_takesMs));
        if (m_succeed)
            return {};
        return Error::make(ErrorCode::Unavailable, QStringLiteral("HTTP 503 for %1").arg(event.eventId));
    }
    QStringList seen;

private:
    bool m_succeed;
    FakeClock *m_clock;
    qint64 m_takesMs;
};

OutboxEvent outboxEvent(qint64 id, int attempts, const QString &type = QStringLiteral("order.paid"))
{
    OutboxEvent e;
    e.id = id;
    e.eventId = QStringLiteral("evt-%1").arg(id);
    e.eventType = type;
    e.attempts = attempts;
    return e;
}

OutboxDispatcherOptions options()
{
    OutboxDispatcherOptions o;
    o.dispatcherId = QStringLiteral("d1");
    o.batchSize = 10;
    o.claimLease = std::chrono::milliseconds(10000);
    o.leaseMargin = std::chrono::milliseconds(2000);
    o.maxAttempts = 4;
    o.backoff = RetryOptions{1, std::chrono::milliseconds(100), 2, std::chrono::milliseconds(1000), 0.5};
    return o;
}

} // namespace

class TestOutboxDispatcher : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nothingDue()
    {
        FakeClock clock;
        FakeStore store;
        OutboxHandlerRegistry registry;
        OutboxDispatcher dispatcher(store, registry, clock, options());
        const auto stats = dispatcher.runOnce();
        QVERIFY(stats.ok());
        QCOMPARE(stats->claimed, 0);
        QCOMPARE(store.lastLimit, 10);
        QCOMPARE(store.lastClaimUntil, clock.nowMs() + 10000);
        QVERIFY(store.reported.isEmpty());
    }

    void deliveredCountsTheAttempt()
    {
        FakeClock clock;
        FakeStore store;
        store.due = {outboxEvent(1, 0), outboxEvent(2, 2)};
        auto handler = std::make_shared<ScriptedHandler>(true);
        OutboxHandlerRegistry registry;
        registry.add(QStringLiteral("order.paid"), handler);
        OutboxDispatcher dispatcher(store, registry, clock, options());
        const auto stats = dispatcher.runOnce();
        QVERIFY(stats.ok());
        QCOMPARE(stats->delivered, 2);
        QCOMPARE(store.reported.size(), 2);
        QCOMPARE(store.reported[0].kind, OutboxOutcome::Kind::Delivered);
        QCOMPARE(store.reported[0].attempts, 1);
        QCOMPARE(store.reported[1].attempts, 3);
        QCOMPARE(handler->seen, (QStringList{QStringLiteral("evt-1"), QStringLiteral("evt-2")}));
    }

    void backoffIsExponentialWithJitter_data()
    {
        QTest::addColumn<int>("attemptsBefore");
        QTest::addColumn<double>("draw");
        QTest::addColumn<qint64>("expectedDelayMs");
        // base 100 ms doubling, capped at 1000 ms; jitter 0.5: factor 0.5 .. 1.5.
        QTest::newRow("first failure, middle draw") << 0 << 0.5 << qint64(100);
        QTest::newRow("first failure, lowest draw") << 0 << 0.0 << qint64(50);
        QTest::newRow("second failure, highest draw") << 1 << 0.999999 << qint64(299);
        QTest::newRow("third failure, middle draw") << 2 << 0.5 << qint64(400);
    }
    void backoffIsExponentialWithJitter()
    {
        QFETCH(int, attemptsBefore);
        QFETCH(double, draw);
        QFETCH(qint64, expectedDelayMs);
        FakeClock clock;
        FakeStore store;
        store.due = {outboxEvent(1, attemptsBefore)};
        OutboxHandlerRegistry registry;
        registry.add(QStringLiteral("order.paid"), std::make_shared<ScriptedHandler>(false));
        OutboxDispatcher dispatcher(store, registry, clock, options(), [draw] { return draw; });
        const auto stats = dispatcher.runOnce();
        QVERIFY(stats.ok());
        QCOMPARE(stats->retried, 1);
        const OutboxOutcome &o = store.reported.value(0);
        QCOMPARE(o.kind, OutboxOutcome::Kind::Retry);
        QCOMPARE(o.attempts, attemptsBefore + 1);
        QCOMPARE(o.nextAttemptAtMs - clock.nowMs(), expectedDelayMs);
        QCOMPARE(o.error, QStringLiteral("HTTP 503 for evt-1"));
    }

    void deadAfterMaxAttemptsWithTheLastError()
    {
        FakeClock clock;
        FakeStore store;
        store.due = {outboxEvent(1, 3)};
        OutboxHandlerRegistry registry;
        registry.add(QStringLiteral("order.paid"), std::make_shared<ScriptedHandler>(false));
        OutboxDispatcher dispatcher(store, registry, clock, options());
        const auto stats = dispatcher.runOnce();
        QVERIFY(stats.ok());
        QCOMPARE(stats->dead, 1);
        QCOMPARE(store.reported.value(0).kind, OutboxOutcome::Kind::Dead);
        QCOMPARE(store.reported.value(0).attempts, 4);
        QCOMPARE(store.reported.value(0).error, QStringLiteral("HTTP 503 for evt-1"));
    }

    // A dead event is announced once it is recorded (outbox.dead_letter); a retry is not,
    // nor a dead outcome the store may have refused (a stale claim).
    void deadLetterIsPublishedOnceRecorded()
    {
        FakeClock clock;
        FakeStore store;
        store.due = {outboxEvent(7, 3), outboxEvent(8, 0)};
        store.due[0].aggregateId = QStringLiteral("ORD-7");
        OutboxHandlerRegistry registry;
        registry.add(QStringLiteral("order.paid"), std::make_shared<ScriptedHandler>(false));
        OutboxDispatcherOptions withSink = options();
        QList<StreamEvent> published;
        withSink.events = [&published](const StreamEvent &event) { published.append(event); };
        OutboxDispatcher dispatcher(store, registry, clock, withSink);
        QVERIFY(dispatcher.runOnce().ok());
        QCOMPARE(published.size(), 1);
        const StreamEvent &dead = published.constFirst();
        QCOMPARE(dead.kind, streamevent::OutboxDeadLetter);
        QCOMPARE(dead.subject, QStringLiteral("outbox:7"));
        QCOMPARE(dead.value, QStringLiteral("order.paid"));
        QCOMPARE(dead.actor, QStringLiteral("system:d1"));
        QCOMPARE(dead.reason, QStringLiteral("HTTP 503 for evt-7"));
        QCOMPARE(dead.detail.value(QStringLiteral("event_id")).toString(), QStringLiteral("evt-7"));
        QCOMPARE(dead.detail.value(QStringLiteral("aggregate_id")).toString(), QStringLiteral("ORD-7"));
        QCOMPARE(dead.detail.value(QStringLiteral("attempts")).toInt(), 4);

        store.due = {outboxEvent(9, 3)};
        store.refuse = 1;
        QVERIFY(dispatcher.runOnce().ok());
        QCOMPARE(published.size(), 1);
    }

    void handlersByTypeFallbackAndMissing()
    {
        FakeClock clock;
        FakeStore store;
        store.due = {outboxEvent(1, 0, QStringLiteral("order.paid")),
                     outboxEvent(2, 0, QStringLiteral("order.refunded"))};
        auto paid = std::make_shared<ScriptedHandler>(true);
        OutboxHandlerRegistry registry;
        registry.add(QStringLiteral("order.paid"), paid);
        OutboxDispatcher dispatcher(store, registry, clock, options());
        QVERIFY(dispatcher.runOnce().ok());
        QCOMPARE(paid->seen, QStringList{QStringLiteral("evt-1")});
        QCOMPARE(store.reported.value(1).kind, OutboxOutcome::Kind::Retry);
        QVERIFY(store.reported.value(1).error.contains(QStringLiteral("no handler")));

        auto fallback = std::make_shared<ScriptedHandler>(true);
        registry.setFallback(fallback);
        store.due = {outboxEvent(3, 0, QStringLiteral("order.refunded"))};
        QVERIFY(dispatcher.runOnce().ok());
        QCOMPARE(fallback->seen, QStringList{QStringLiteral("evt-3")});
        QVERIFY(LogHandler().deliver(outboxEvent(4, 0)).ok());
    }

    void leaseMarginReleasesTheRest()
    {
        FakeClock clock;
        FakeStore store;
        store.due = {outboxEvent(1, 0), outboxEvent(2, 0), outboxEvent(3, 0), outboxEvent(4, 0)};
        // Each delivery takes 3 s of a 10 s lease with a 2 s margin: starts at 0, 3, 6 s;
        // the fourth would start at 9 s > 8 s and is released.
        auto slow = std::make_shared<ScriptedHandler>(true, &clock, 3000);
        OutboxHandlerRegistry registry;
        registry.add(QStringLiteral("order.paid"), slow);
        OutboxDispatcher dispatcher(store, registry, clock, options());
        const auto stats = dispatcher.runOnce();
        QVERIFY(stats.ok());
        QCOMPARE(stats->delivered, 3);
        QCOMPARE(stats->released, 1);
        QCOMPARE(store.reported.value(3).kind, OutboxOutcome::Kind::Released);
        QCOMPARE(slow->seen.size(), 3);
    }

    void staleReportsAreCounted()
    {
        FakeClock clock;
        FakeStore store;
        store.due = {outboxEvent(1, 0), outboxEvent(2, 0)};
        store.refuse = 1;
        OutboxHandlerRegistry registry;
        registry.add(QStringLiteral("order.paid"), std::make_shared<ScriptedHandler>(true));
        OutboxDispatcher dispatcher(store, registry, clock, options());
        const auto stats = dispatcher.runOnce();
        QVERIFY(stats.ok());
        QCOMPARE(stats->staleReports, 1);
    }
};

QTEST_GUILESS_MAIN(TestOutboxDispatcher)
#include "tst_outboxdispatcher.moc"
