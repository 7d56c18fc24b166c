// DeliveryGroupCommit: many callers, one writer thread, each caller told only once the
// transaction holding its own row has committed — and not kept waiting for it by append().
// The writer is a fake (a map, a sleep or a gate standing for the commit); the real
// transaction is tst_callbackpipeline's.
#include "core/callback/deliverygroupcommit.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace payonce::core;
using namespace std::chrono_literals;

namespace {

DeliveryRecord rowFor(const QString &payNo)
{
    DeliveryRecord record;
    record.payNo = payNo;
    record.verified = true;
    record.layer = payonce::Layer::UniqueIndex;
    return record;
}

/// Holds a writer until released (a commit that takes as long as the test wants).
struct Gate {
    std::mutex mutex;
    std::condition_variable changed;
    bool open = true;
    int waiting = 0;
    void close()
    {
        std::lock_guard guard(mutex);
        open = false;
    }
    void release()
    {
        std::lock_guard guard(mutex);
        open = true;
        changed.notify_all();
    }
    void pass()
    {
        std::unique_lock lock(mutex);
        ++waiting;
        changed.notify_all();
        changed.wait(lock, [this] { return open; });
        --waiting;
    }
    bool waitForWaiter(std::chrono::milliseconds timeout)
    {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, timeout, [this] { return waiting > 0; });
    }
};

/// A table that commits after commitTime, handing out ids in order.
struct FakeTable {
    std::chrono::microseconds commitTime{500};
    std::mutex mutex;
    qint64 nextId = 1;
    std::map<QString, qint64> committed; ///< pay_no -> id, once its batch "committed"
    std::vector<int> batchSizes;
    std::atomic<int> writersAtOnce{0};
    std::atomic<int> mostWritersAtOnce{0};
    QString failWhenBatchHolds; ///< a batch holding this pay_no fails whole
    Gate gate;                  ///< every batch passes it before it "commits"

    Result<QList<qint64>> write(const QList<DeliveryRecord> &rows)
    {
        gate.pass();
        const int now = ++writersAtOnce;
        for (int seen = mostWritersAtOnce.load(); now > seen && !mostWritersAtOnce.compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(commitTime);
        std::lock_guard guard(mutex);
        --writersAtOnce;
        batchSizes.push_back(int(rows.size()));
        for (const DeliveryRecord &r : rows) {
            if (!failWhenBatchHolds.isEmpty() && r.payNo == failWhenBatchHolds)
                return Error::make(ErrorCode::Unavailable, QStringLiteral("connection lost"));
        }
        QList<qint64> ids;
        for (const DeliveryRecord &r : rows) {
            ids.append(nextId);
            committed[r.payNo] = nextId++;
        }
        return ids;
    }
};

void runThreads(int count, const std::function<void(int)> &body)
{
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i)
        threads.emplace_back(body, i);
    for (auto &t : threads)
        t.join();
}

} // namespace

class TestDeliveryGroupCommit : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aLoneRowIsWrittenAtOnce();
    void concurrentRowsShareCommitsAndEachIsBackOnlyOnceItsOwnIsIn();
    void aFailedBatchFailsEveryRowInItAndNoOther();
    void batchesNeverExceedTheirBound();
    void appendDoesNotWaitAndEachAnswerFollowsItsCommit();
    void aFullQueueRefusesAtOnceAndCounts();
    void destroyedItWritesWhatIsQueuedFirst();
};

void TestDeliveryGroupCommit::aLoneRowIsWrittenAtOnce()
{
    FakeTable table;
    DeliveryGroupCommit group([&](const QList<DeliveryRecord> &rows) { return table.write(rows); });
    for (int i = 0; i < 3; ++i) {
        auto id = group.append(rowFor(QStringLiteral("P%1").arg(i)));
        QVERIFY(id.ok());
        QCOMPARE(id.value(), qint64(i + 1));
    }
    QCOMPARE(table.batchSizes, (std::vector<int>{1, 1, 1}));
    QCOMPARE(group.batchesWritten(), quint64(3));
    QCOMPARE(group.rowsWritten(), quint64(3));
}

void TestDeliveryGroupCommit::concurrentRowsShareCommitsAndEachIsBackOnlyOnceItsOwnIsIn()
{
    FakeTable table;
    table.commitTime = 2ms;
    DeliveryGroupCommit group([&](const QList<DeliveryRecord> &rows) { return table.write(rows); });
    constexpr int threads = 32, perThread = 40;
    std::mutex mutex;
    std::map<QString, qint64> answered;
    QStringList wrong;
    runThreads(threads, [&](int t) {
        for (int i = 0; i < perThread; ++i) {
            const QString payNo = QStringLiteral("T%1-%2").arg(t).arg(i);
            auto id = group.append(rowFor(payNo));
            std::lock_guard guard(mutex);
            std::lock_guard tableGuard(table.mutex);
            const auto in = table.committed.find(payNo);
            if (!id.ok())
                wrong << payNo + QStringLiteral(": ") + id.error().internalMessage;
            else if (in == table.committed.end())
                wrong << payNo + QStringLiteral(": answered before its row committed");
            else if (in->second != id.value())
                wrong << payNo + QStringLiteral(": answered id %1, committed as %2").arg(id.value()).arg(in->second);
            else
                answered[payNo] = id.value();
        }
    });
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.mid(0, 5).join(QLatin1Char('\n'))));
    QCOMPARE(int(answered.size()), threads * perThread);
    std::set<qint64> ids;
    for (const auto &[payNo, id] : answered)
        ids.insert(id);
    QCOMPARE(int(ids.size()), threads * perThread); // no two callers were given one row
    QCOMPARE(table.mostWritersAtOnce.load(), 1);
    const int batches = int(table.batchSizes.size());
    qInfo("%d rows in %d commits (largest %d)", threads * perThread, batches,
          *std::max_element(table.batchSizes.begin(), table.batchSizes.end()));
    // 32 callers and a 2 ms commit: far fewer commits than rows, or nothing was grouped.
    QVERIFY2(batches * 4 < threads * perThread, qPrintable(QString::number(batches)));
    QCOMPARE(group.rowsWritten(), quint64(threads * perThread));
    QCOMPARE(group.batchesWritten(), quint64(batches));
}

void TestDeliveryGroupCommit::aFailedBatchFailsEveryRowInItAndNoOther()
{
    FakeTable table;
    table.commitTime = 3ms;
    table.failWhenBatchHolds = QStringLiteral("T0-5");
    DeliveryGroupCommit group([&](const QList<DeliveryRecord> &rows) { return table.write(rows); });
    std::mutex mutex;
    int failed = 0, succeeded = 0;
    QStringList wrong;
    runThreads(16, [&](int t) {
        for (int i = 0; i < 20; ++i) {
            const QString payNo = QStringLiteral("T%1-%2").arg(t).arg(i);
            auto id = group.append(rowFor(payNo));
            std::lock_guard guard(mutex);
            std::lock_guard tableGuard(table.mutex);
            const bool in = table.committed.count(payNo) == 1;
            if (id.ok() != in)
                wrong << payNo
                             + (id.ok() ? QStringLiteral(": answered but not written")
                                        : QStringLiteral(": failed but written"));
            if (!id.ok() && id.error().code != ErrorCode::Unavailable)
                wrong << payNo + QStringLiteral(": failed with another error");
            id.ok() ? ++succeeded : ++failed;
        }
    });
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QLatin1Char('\n'))));
    QVERIFY(failed >= 1); // at least T0-5 itself
    QCOMPARE(succeeded + failed, 320);
    QCOMPARE(group.rowsWritten(), quint64(succeeded));
}

void TestDeliveryGroupCommit::batchesNeverExceedTheirBound()
{
    FakeTable table;
    table.commitTime = 5ms;
    DeliveryGroupCommit group([&](const QList<DeliveryRecord> &rows) { return table.write(rows); }, 4);
    std::atomic<int> ok{0};
    runThreads(24, [&](int t) {
        for (int i = 0; i < 10; ++i)
            ok += group.append(rowFor(QStringLiteral("T%1-%2").arg(t).arg(i))).ok() ? 1 : 0;
    });
    QCOMPARE(ok.load(), 240);
    QVERIFY(*std::max_element(table.batchSizes.begin(), table.batchSizes.end()) <= 4);
    QVERIFY(table.batchSizes.size() < 240);
}

void TestDeliveryGroupCommit::appendDoesNotWaitAndEachAnswerFollowsItsCommit()
{
    FakeTable table;
    DeliveryGroupCommit group([&](const QList<DeliveryRecord> &rows) { return table.write(rows); });
    table.gate.close();
    // 4 callers hand in 50 rows each while the first batch cannot commit: every append
    // returns all the same (a request thread is free for the next request).
    std::mutex mutex;
    std::map<QString, qint64> answered;
    QStringList wrong;
    std::atomic<int> told{0};
    runThreads(4, [&](int t) {
        for (int i = 0; i < 50; ++i) {
            const QString payNo = QStringLiteral("T%1-%2").arg(t).arg(i);
            group.append(rowFor(payNo), [&, payNo](Result<qint64> id) {
                std::lock_guard guard(mutex);
                std::lock_guard tableGuard(table.mutex);
                const auto in = table.committed.find(payNo);
                if (!id.ok())
                    wrong << payNo + QStringLiteral(": ") + id.error().internalMessage;
                else if (in == table.committed.end() || in->second != id.value())
                    wrong << payNo + QStringLiteral(": answered before its row committed, or with another id");
                else
                    answered[payNo] = id.value();
                ++told;
            });
        }
    });
    QVERIFY(table.gate.waitForWaiter(10s));
    QCOMPARE(told.load(), 0); // nothing answered while the commit is held
    table.gate.release();
    QTRY_COMPARE_WITH_TIMEOUT(told.load(), 200, 10000);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.mid(0, 5).join(QLatin1Char('\n'))));
    std::set<qint64> ids;
    for (const auto &[payNo, id] : answered)
        ids.insert(id);
    QCOMPARE(int(ids.size()), 200);
    // The 199 rows queued behind the held batch went in a few batches (at most 256 a batch).
    QVERIFY2(table.batchSizes.size() <= 3, qPrintable(QString::number(table.batchSizes.size())));
}

void TestDeliveryGroupCommit::aFullQueueRefusesAtOnceAndCounts()
{
    FakeTable table;
    DeliveryGroupCommit group([&](const QList<DeliveryRecord> &rows) { return table.write(rows); }, 256, 8);
    table.gate.close();
    std::atomic<int> ok{0}, refused{0};
    auto tally = [&](Result<qint64> id) {
        if (id.ok())
            ++ok;
        else if (id.error().code == ErrorCode::Unavailable)
            ++refused;
    };
    group.append(rowFor(QStringLiteral("FIRST")), tally);
    QVERIFY(table.gate.waitForWaiter(10s)); // the first batch (one row) is being written
    for (int i = 0; i < 8; ++i)
        group.append(rowFor(QStringLiteral("Q%1").arg(i)), tally);
    QCOMPARE(refused.load(), 0);
    group.append(rowFor(QStringLiteral("ONE-TOO-MANY")), tally); // refused here, at once
    QCOMPARE(refused.load(), 1);
    QCOMPARE(group.queueFullRefusals(), quint64(1));
    table.gate.release();
    QTRY_COMPARE_WITH_TIMEOUT(ok.load(), 9, 10000);
    std::lock_guard guard(table.mutex);
    QCOMPARE(table.committed.count(QStringLiteral("ONE-TOO-MANY")), std::size_t(0));
}

void TestDeliveryGroupCommit::destroyedItWritesWhatIsQueuedFirst()
{
    FakeTable table;
    auto group = std::make_unique<DeliveryGroupCommit>(
        [&](const QList<DeliveryRecord> &rows) { return table.write(rows); });
    table.gate.close();
    std::atomic<int> ok{0};
    for (int i = 0; i < 20; ++i)
        group->append(rowFor(QStringLiteral("R%1").arg(i)), [&](Result<qint64> id) { ok += id.ok() ? 1 : 0; });
    QVERIFY(table.gate.waitForWaiter(10s));
    std::thread destroyer([&] { group.reset(); });
    table.gate.release();
    destroyer.join();
    QCOMPARE(ok.load(), 20); // every queued row written and its caller told before the end
    QCOMPARE(int(table.committed.size()), 20);
}

QTEST_GUILESS_MAIN(TestDeliveryGroupCommit)
#include "tst_deliverygroupcommit.moc"
