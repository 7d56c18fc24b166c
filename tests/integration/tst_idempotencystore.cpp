// L1 in the database, once per dialect (tst_idempotencystore_sqlite / _postgresql /
// _mariadb): the unique index lets exactly one of 32 racing begin() calls start, a
// completed record replays its exact body, a released one may start again, the operator
// unlock and the retention purge delete only what they should.

#include "storagefixture.h"

#include "sql/sqlidempotencystore.h"

#include <QTest>

#include <atomic>
#include <mutex>

using namespace payonce;
using namespace payonce::testsupport;
using core::IdempotencyVerdict;
using core::StoredResponse;

namespace {
constexpr int kThreads = 32;
constexpr int kRounds = 20;
const QByteArray kFingerprint = QByteArray(64, 'a');
const QByteArray kOtherFingerprint = QByteArray(64, 'b');
} // namespace

class TestIdempotencyStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_db.start(), m_db.error());
        m_store = std::make_unique<sql::SqlIdempotencyStore>(*m_db.database);
    }

    // A request that died holding its record (kill -9 between begin() and complete()):
    // within the in-flight timeout a retry is told "in progress"; past it, exactly one of
    // the racing retries takes the record over, and a different body is still a mismatch.
    void staleInFlightRecordIsTakenOverOnce()
    {
        const QString key = QStringLiteral("died-holding-it");
        const qint64 start = 1'000'000;
        QCOMPARE(m_store->begin(10086, key, kFingerprint, start).value().verdict, IdempotencyVerdict::Started);
        QCOMPARE(m_store->begin(10086, key, kFingerprint, start + 59'000).value().verdict,
                 IdempotencyVerdict::InFlight);
        QCOMPARE(m_store->begin(10086, key, QByteArray("other-body"), start + 120'000).value().verdict,
                 IdempotencyVerdict::Mismatch);
        std::atomic<int> started{0}, inFlight{0}, other{0};
        runConcurrently(kThreads, [&](int) {
            auto begun = m_store->begin(10086, key, kFingerprint, start + 61'000);
            if (!begun.ok())
                other.fetch_add(1);
            else if (begun.value().verdict == IdempotencyVerdict::Started)
                started.fetch_add(1);
            else if (begun.value().verdict == IdempotencyVerdict::InFlight)
                inFlight.fetch_add(1);
            else
                other.fetch_add(1);
        });
        QCOMPARE(other.load(), 0);
        QCOMPARE(started.load(), 1);
        QCOMPARE(inFlight.load(), kThreads - 1);
    }

    // The owner that was taken over (its confirm ran past the timeout) comes back: its
    // complete() and release() must not touch the taker's record.
    void takenOverRecordIsNotOverwrittenByTheOldOwner()
    {
        const QString key = QStringLiteral("taken-over");
        const qint64 start = 2'000'000;
        const auto old = m_store->begin(10087, key, kFingerprint, start).value();
        QCOMPARE(old.verdict, IdempotencyVerdict::Started);
        const auto taker = m_store->begin(10087, key, kFingerprint, start + 61'000).value();
        QCOMPARE(taker.verdict, IdempotencyVerdict::Started);
        QVERIFY(!old.owner.isEmpty() && taker.owner != old.owner);
        const StoredResponse late{QStringLiteral("duplicate_request"), QByteArrayLiteral("{\"old\":true}")};
        QVERIFY2(!m_store->release(10087, key, old.owner).value(), "the old owner deleted the taker's record");
        QVERIFY2(!m_store->complete(10087, key, old.owner, late, start + 62'000).value(),
                 "the old owner completed the taker's record");
        QVERIFY2(!m_store->heartbeat(10087, key, old.owner, start + 62'000).value(),
                 "the old owner's heartbeat counted");
        auto record = m_store->find(10087, key);
        QVERIFY(record.ok() && record.value());
        QCOMPARE(record.value()->status, core::IdempotencyStatus::InFlight);
        QCOMPARE(record.value()->lockedAtMs, start + 61'000);
        const StoredResponse mine{QStringLiteral("created"), QByteArrayLiteral("{\"taker\":true}")};
        QVERIFY(m_store->complete(10087, key, taker.owner, mine, start + 63'000).value());
        QCOMPARE(m_store->begin(10087, key, kFingerprint, start + 64'000).value().response->body, mine.body);
    }

    // A running request's heartbeat keeps its record from being taken over, however long
    // it runs; once the heartbeats stop for a whole timeout, it is taken over.
    void heartbeatKeepsARunningRecord()
    {
        const QString key = QStringLiteral("beating");
        const qint64 start = 3'000'000;
        const auto running = m_store->begin(10088, key, kFingerprint, start).value();
        QCOMPARE(running.verdict, IdempotencyVerdict::Started);
        for (qint64 at = start + 15'000; at <= start + 300'000; at += 15'000) {
            QVERIFY(m_store->heartbeat(10088, key, running.owner, at).value());
            QCOMPARE(m_store->begin(10088, key, kFingerprint, at + 1'000).value().verdict,
                     IdempotencyVerdict::InFlight);
        }
        QCOMPARE(m_store->begin(10088, key, kFingerprint, start + 300'000 + 60'001).value().verdict,
                 IdempotencyVerdict::Started);
        QVERIFY(!m_store->heartbeat(10088, key, running.owner, start + 300'000 + 60'002).value());
    }

    void beginRace()
    {
        for (int round = 0; round < kRounds; ++round) {
            const QString key = QStringLiteral("race-%1").arg(round);
            std::atomic<int> started{0}, inFlight{0}, other{0};
            std::mutex mutex;
            QString firstError;
            runConcurrently(kThreads, [&](int) {
                auto begun = m_store->begin(10086, key, kFingerprint, 1000);
                if (!begun.ok()) {
                    other.fetch_add(1);
                    std::lock_guard guard(mutex);
                    firstError = begun.error().internalMessage;
                } else if (begun.value().verdict == IdempotencyVerdict::Started) {
                    started.fetch_add(1);
                } else if (begun.value().verdict == IdempotencyVerdict::InFlight) {
                    inFlight.fetch_add(1);
                } else {
                    other.fetch_add(1);
                }
            });
            QVERIFY2(other == 0, qPrintable(firstError));
            QCOMPARE(started.load(), 1);
            QCOMPARE(inFlight.load(), kThreads - 1);
            QCOMPARE(
                countRows(*m_db.database,
                          QStringLiteral("SELECT COUNT(*) FROM idempotency_keys WHERE user_id = ? AND idem_key = ?"),
                          {10086, key}),
                qint64(1));
        }
    }

    void completeThenReplay()
    {
        const QString key = QStringLiteral("replay");
        const auto begun = m_store->begin(1, key, kFingerprint, 1000).value();
        QCOMPARE(begun.verdict, IdempotencyVerdict::Started);
        const StoredResponse response{QStringLiteral("created"),
                                      QByteArray("{\"order_no\":\"ORD1\",\"code_url\":\"weixin://x?a=1&b=\\u00e9\","
                                                 "\"duplicate\":false,\"note\":\"\xe4\xb8\xad\"}")};
        QCOMPARE(m_store->complete(1, key, begun.owner, response, 2000).value(), true);
        QCOMPARE(m_store->complete(1, key, begun.owner, response, 2000).value(), false); // CAS: once

        const auto again = m_store->begin(1, key, kFingerprint, 3000);
        QVERIFY(again.ok());
        QCOMPARE(again.value().verdict, IdempotencyVerdict::Replay);
        QVERIFY(again.value().response);
        QCOMPARE(again.value().response->outcome, response.outcome);
        QCOMPARE(again.value().response->body, response.body);

        QCOMPARE(m_store->begin(1, key, kOtherFingerprint, 3000).value().verdict, IdempotencyVerdict::Mismatch);
        const auto record = m_store->find(1, key).value();
        QVERIFY(record);
        QCOMPARE(record->status, core::IdempotencyStatus::Completed);
        QCOMPARE(record->completedAtMs.value_or(0), qint64(2000));
        QCOMPARE(m_store->release(1, key, begun.owner).value(), false); // completed stays
    }

    void releaseLetsTheKeyStartAgain()
    {
        const QString key = QStringLiteral("released");
        const auto begun = m_store->begin(2, key, kFingerprint, 1000).value();
        QCOMPARE(begun.verdict, IdempotencyVerdict::Started);
        QCOMPARE(m_store->begin(2, key, kOtherFingerprint, 1000).value().verdict, IdempotencyVerdict::Mismatch);
        QCOMPARE(m_store->release(2, key, QStringLiteral("someone-else")).value(), false); // not that request's record
        QCOMPARE(m_store->release(2, key, begun.owner).value(), true);
        QVERIFY(!m_store->find(2, key).value());
        QCOMPARE(m_store->begin(2, key, kFingerprint, 1000).value().verdict, IdempotencyVerdict::Started);
    }

    void unlockStuckOnlyPastTheTimeout()
    {
        const QString key = QStringLiteral("stuck");
        QCOMPARE(m_store->begin(3, key, kFingerprint, 10'000).value().verdict, IdempotencyVerdict::Started);
        QCOMPARE(m_store->unlockStuck(3, key, 5'000).value(), false);
        QCOMPARE(m_store->unlockStuck(3, key, 20'000).value(), true);
        QVERIFY(!m_store->find(3, key).value());
    }

    void purgeRemovesOnlyOldRows()
    {
        const qint64 base = 9'000'000'000'000;
        for (int i = 0; i < 5; ++i)
            QVERIFY(m_store->begin(4, QStringLiteral("old-%1").arg(i), kFingerprint, base + i).ok());
        for (int i = 0; i < 3; ++i)
            QVERIFY(m_store->begin(4, QStringLiteral("new-%1").arg(i), kFingerprint, base + 100'000 + i).ok());
        // everything older than the earlier tests' rows included
        const auto purged = m_store->purgeOlderThan(base + 50'000);
        QVERIFY(purged.ok());
        QVERIFY(purged.value() >= 5);
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM idempotency_keys WHERE user_id = 4")),
                 qint64(3));
        QCOMPARE(countRows(*m_db.database,
                           QStringLiteral("SELECT COUNT(*) FROM idempotency_keys WHERE idem_key LIKE 'new-%'")),
                 qint64(3));
    }

private:
    MigratedDatabase m_db;
    std::unique_ptr<sql::SqlIdempotencyStore> m_store;
};

QTEST_GUILESS_MAIN(TestIdempotencyStore)
#include "tst_idempotencystore.moc"
