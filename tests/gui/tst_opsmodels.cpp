// The operations views' models alone: the drain's progress from successive mode answers,
// a lock.lost event marking (or adding) a lock, stale-token refusals bounded and newest
// first, a re-driven outbox event marked, Unlock's blocker — and every model under
// QAbstractItemModelTester, fed what a misbehaving agent might send.

#include "console/models/drainprogress.h"
#include "console/models/idempotencyrecordmodel.h"
#include "console/models/locksmodel.h"
#include "console/models/outboxmodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QTest>

using namespace payonce;
using namespace payonce::console;

namespace {

QJsonObject modeAnswer(const char *mode, qint64 waiting)
{
    return {{QStringLiteral("callbacks"), QLatin1String(mode)},
            {QStringLiteral("accepted_waiting"), waiting},
            {QStringLiteral("changed_by"), QStringLiteral("desk")},
            {QStringLiteral("reason"), QStringLiteral("INC-1")}};
}

StreamEvent streamEvent(const QString &kind, const QString &subject, const QString &value, QJsonObject detail)
{
    return StreamEvent{kind,  subject, value, QStringLiteral("system:agent-1"), QStringLiteral("renewal refused"),
                       detail};
}

} // namespace

class TestOpsModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void drainProgressCountsDownFromThePeak()
    {
        DrainProgress progress;
        QVERIFY(progress.apply(modeAnswer("normal", 0)));
        QVERIFY(!progress.wantsPolling());
        QCOMPARE(progress.percentDone(), 100);
        QVERIFY(progress.apply(modeAnswer("accept_only", 3)));
        QVERIFY(progress.acceptOnly() && progress.wantsPolling());
        QVERIFY(progress.apply(modeAnswer("accept_only", 8)));
        QCOMPARE(progress.peak(), qint64(8));
        QVERIFY(progress.apply(modeAnswer("normal", 6)));
        QVERIFY(progress.draining() && progress.wantsPolling());
        QCOMPARE(progress.percentDone(), 25);
        QVERIFY(progress.apply(modeAnswer("normal", 0)));
        QCOMPARE(progress.percentDone(), 100);
        QVERIFY(!progress.wantsPolling());
        QCOMPARE(progress.changedBy(), QStringLiteral("desk"));
        // A new incident starts its own peak.
        QVERIFY(progress.apply(modeAnswer("accept_only", 2)));
        QCOMPARE(progress.peak(), qint64(2));
    }

    void drainProgressIgnoresWhatIsNotAModeAnswer()
    {
        DrainProgress progress;
        QVERIFY(progress.apply(modeAnswer("accept_only", 4)));
        QVERIFY(!progress.apply({}));
        QVERIFY(!progress.apply({{QStringLiteral("callbacks"), 1}, {QStringLiteral("accepted_waiting"), 2}}));
        QVERIFY(!progress.apply({{QStringLiteral("callbacks"), QStringLiteral("normal")},
                                 {QStringLiteral("accepted_waiting"), QStringLiteral("many")}}));
        QVERIFY(!progress.apply(modeAnswer("normal", -1)));
        QVERIFY(progress.acceptOnly());
        QCOMPARE(progress.waiting(), qint64(4));
    }

    void lockLostMarksTheLockOrAddsIt()
    {
        LocksModel locks;
        QAbstractItemModelTester tester(&locks, QAbstractItemModelTester::FailureReportingMode::QtTest);
        locks.setRows(QJsonArray{QJsonObject{{QStringLiteral("key"), QStringLiteral("lock:pay:A")},
                                             {QStringLiteral("state"), QStringLiteral("held")},
                                             {QStringLiteral("fencing_token"), QStringLiteral("7")},
                                             {QStringLiteral("renewals"), 2}},
                                 QStringLiteral("not an object"), 3});
        QCOMPARE(locks.rowCount(), 1);
        locks.applyLockLost(streamEvent(QString(streamevent::LockLost), QStringLiteral("lock:pay:A"),
                                        QStringLiteral("lost"),
                                        {{QStringLiteral("fencing_token"), QStringLiteral("7")},
                                         {QStringLiteral("fence_scope"), QStringLiteral("ORD-A")}}));
        QCOMPARE(locks.rowCount(), 1);
        QCOMPARE(locks.index(0, locks.columnOf(QStringLiteral("state"))).data().toString(), QStringLiteral("lost"));
        QCOMPARE(locks.index(0, locks.columnOf(QStringLiteral("fence_scope"))).data().toString(),
                 QStringLiteral("ORD-A"));
        QCOMPARE(locks.index(0, locks.columnOf(QStringLiteral("renewals"))).data().toString(), QStringLiteral("2"));
        QVERIFY(locks.index(0, locks.columnOf(QStringLiteral("state"))).data(Qt::ForegroundRole).isValid());
        // An unknown lock is added; a detail with a numeric token still reads; no subject: ignored.
        locks.applyLockLost(streamEvent(QString(streamevent::LockLost), QStringLiteral("lock:pay:B"),
                                        QStringLiteral("lost"), {{QStringLiteral("fencing_token"), 9}}));
        QCOMPARE(locks.rowCount(), 2);
        QCOMPARE(locks.rowObject(locks.rowOf(QStringLiteral("lock:pay:B")))
                     .value(QStringLiteral("fencing_token"))
                     .toString(),
                 QStringLiteral("9"));
        locks.applyLockLost(streamEvent(QString(streamevent::LockLost), QString(), QString(), {}));
        QCOMPARE(locks.rowCount(), 2);
    }

    // The key inspector's rows: a stuck lock in red with why in words, a live one plain.
    void storedLocksShowTheStuckOnesInRed()
    {
        StoredLocksModel stored;
        QAbstractItemModelTester tester(&stored, QAbstractItemModelTester::FailureReportingMode::QtTest);
        stored.setScan(QJsonArray{QJsonObject{{QStringLiteral("key"), QStringLiteral("lock:pay:A")},
                                              {QStringLiteral("stored_key"), QStringLiteral("{7Qa}lock:pay:A")},
                                              {QStringLiteral("node"), QStringLiteral("127.0.0.1:7001")},
                                              {QStringLiteral("owner"), QStringLiteral("gone")},
                                              {QStringLiteral("ttl_left_ms"), -1},
                                              {QStringLiteral("held_by_this_agent"), false},
                                              {QStringLiteral("stuck"), true},
                                              {QStringLiteral("stuck_reason"), QStringLiteral("no_expiry")}},
                                  QJsonObject{{QStringLiteral("key"), QStringLiteral("lock:order:B")},
                                              {QStringLiteral("node"), QStringLiteral("127.0.0.1:7002")},
                                              {QStringLiteral("ttl_left_ms"), 9000},
                                              {QStringLiteral("held_by_this_agent"), true},
                                              {QStringLiteral("stuck"), false},
                                              {QStringLiteral("stuck_reason"), QJsonValue(QJsonValue::Null)}},
                                  QJsonObject{{QStringLiteral("key"), QStringLiteral("lock:pay:C")},
                                              {QStringLiteral("ttl_left_ms"), 99999999},
                                              {QStringLiteral("stuck"), true},
                                              {QStringLiteral("stuck_reason"), QStringLiteral("ttl_above_lock_ttl")}}});
        QCOMPARE(stored.rowCount(), 3);
        const auto text = [&](int row, const char *key) {
            return stored.index(row, stored.columnOf(QLatin1String(key))).data().toString();
        };
        QCOMPARE(text(0, "stuck_text"), QStringLiteral("never expires"));
        QCOMPARE(text(0, "node"), QStringLiteral("127.0.0.1:7001"));
        QCOMPARE(text(0, "held_text"), QStringLiteral("no"));
        QCOMPARE(text(1, "stuck_text"), QString());
        QCOMPARE(text(1, "held_text"), QStringLiteral("yes"));
        QCOMPARE(text(2, "stuck_text"), QStringLiteral("expires later than any lock of ours"));
        QVERIFY(stored.index(0, stored.columnOf(QStringLiteral("key"))).data(Qt::ForegroundRole).isValid());
        QVERIFY(!stored.index(1, stored.columnOf(QStringLiteral("key"))).data(Qt::ForegroundRole).isValid());
        QVERIFY(stored.index(2, stored.columnOf(QStringLiteral("ttl_left_ms"))).data(Qt::ForegroundRole).isValid());
    }

    void staleRefusalsAreNewestFirstAndBounded()
    {
        StaleRefusalsModel refusals;
        QAbstractItemModelTester tester(&refusals, QAbstractItemModelTester::FailureReportingMode::QtTest);
        StreamMessage message;
        message.seq = 1;
        message.at = QDateTime::currentDateTimeUtc();
        for (int i = 0; i < StaleRefusalsModel::kMaxRows + 5; ++i) {
            const StreamEvent refused = streamEvent(QString(streamevent::FenceStaleRefused),
                                                    QStringLiteral("ORD-%1").arg(i), QStringLiteral("PAY-%1").arg(i),
                                                    {{QStringLiteral("fencing_token"), i}});
            message.body = refused;
            refusals.applyStaleRefused(message, refused);
        }
        QCOMPARE(refusals.rowCount(), StaleRefusalsModel::kMaxRows);
        const int last = StaleRefusalsModel::kMaxRows + 4;
        QCOMPARE(refusals.rowObject(0).value(QStringLiteral("order_no")).toString(),
                 QStringLiteral("ORD-%1").arg(last));
        QCOMPARE(refusals.rowObject(0).value(QStringLiteral("fencing_token")).toString(), QString::number(last));
        QCOMPARE(refusals.rowObject(0).value(QStringLiteral("pay_no")).toString(), QStringLiteral("PAY-%1").arg(last));
    }

    void redrivenEventsAreMarked()
    {
        OutboxModel outbox;
        QAbstractItemModelTester tester(&outbox, QAbstractItemModelTester::FailureReportingMode::QtTest);
        outbox.setRows(QJsonArray{QJsonObject{{QStringLiteral("id"), 4},
                                              {QStringLiteral("status"), QStringLiteral("dead")},
                                              {QStringLiteral("redriven"), false}},
                                  QJsonObject{{QStringLiteral("id"), 5},
                                              {QStringLiteral("status"), QStringLiteral("delivered")},
                                              {QStringLiteral("redriven"), true}},
                                  QJsonObject{{QStringLiteral("id"), QStringLiteral("junk")}}});
        QCOMPARE(outbox.rowCount(), 3);
        const int redriven = outbox.columnOf(QStringLiteral("redriven"));
        QCOMPARE(outbox.index(outbox.rowOfId(5), redriven).data().toString(), QStringLiteral("yes"));
        QVERIFY(outbox.index(outbox.rowOfId(5), 0).data(Qt::BackgroundRole).isValid());
        QVERIFY(!outbox.index(outbox.rowOfId(4), 0).data(Qt::BackgroundRole).isValid());
        QVERIFY(outbox.index(outbox.rowOfId(4), outbox.columnOf(QStringLiteral("status")))
                    .data(Qt::ForegroundRole)
                    .isValid());
        QCOMPARE(outbox.rowOfId(99), -1);
    }

    void unlockIsOfferedForAnInFlightRecordOnly()
    {
        IdempotencyRecordModel record;
        QAbstractItemModelTester tester(&record, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!IdempotencyRecordModel::unlockBlocker({}).isEmpty());
        QVERIFY(IdempotencyRecordModel::unlockBlocker({{QStringLiteral("status"), QStringLiteral("completed")}})
                    .contains(u"completed"));
        QVERIFY(!IdempotencyRecordModel::unlockBlocker({{QStringLiteral("status"), 3}}).isEmpty());
        QVERIFY(
            IdempotencyRecordModel::unlockBlocker({{QStringLiteral("status"), QStringLiteral("in_flight")}}).isEmpty());
        record.setRows(QList<QJsonObject>{
            {{QStringLiteral("status"), QStringLiteral("in_flight")}, {QStringLiteral("response"), QJsonValue::Null}}});
        QCOMPARE(record.rowCount(), 1);
        QCOMPARE(record.record().value(QStringLiteral("status")).toString(), QStringLiteral("in_flight"));
        QVERIFY(record.index(0, record.columnOf(QStringLiteral("response"))).data().toString().isEmpty());
        record.setRows(QList<QJsonObject>{});
        QVERIFY(record.record().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestOpsModels)
#include "tst_opsmodels.moc"
