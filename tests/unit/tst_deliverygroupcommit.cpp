// DeliveryGroupCommit: many callers, one writer at a time, each caller back only once the
// transaction holding its own row has committed. The writer is a fake (a map and a sleep
// standing for the commit); the real transaction is tst_callbackpipeline's.
#include "core/deliverygroupcommit.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
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

    Result<QList<qint64>> write(const QList<DeliveryRecord> &rows)
    {
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
                wrong << payNo + (id.ok() ? QStringLiteral(": answered but not written")
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

QTEST_GUILESS_MAIN(TestDeliveryGroupCommit)
#include "tst_deliverygroupcommit.moc"
