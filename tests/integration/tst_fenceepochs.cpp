// The epoch half of fencing tokens, from the database: every epoch handed out is larger
// than every one before it and handed out once, also to concurrent callers; the same
// key-store instance gets a new one whenever it needs one.

#include "storagefixture.h"

#include "sql/sqlfenceepochsource.h"

#include <QTest>

#include <mutex>
#include <set>

using namespace payonce;
using namespace payonce::testsupport;

class TestFenceEpochs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_db.start(), m_db.error()); }

    void everyEpochIsLargerThanTheOnesBefore()
    {
        sql::SqlFenceEpochSource epochs(*m_db.database);
        auto first = epochs.newEpoch(QStringLiteral("run-id-a"), QStringLiteral("no_fence_state"));
        QVERIFY2(first.ok(), qPrintable(first.ok() ? QString() : first.error().internalMessage));
        QCOMPARE(epochs.largestEpoch().value(), first.value());
        auto second = epochs.newEpoch(QStringLiteral("run-id-b"), QStringLiteral("no_fence_state"));
        QVERIFY(second.ok());
        QVERIFY(second.value() > first.value());
        // The old instance again (a failback): a new epoch, never its old one.
        auto again = epochs.newEpoch(QStringLiteral("run-id-a"), QStringLiteral("below_largest"));
        QVERIFY(again.ok());
        QVERIFY(again.value() > second.value());
        QCOMPARE(epochs.largestEpoch().value(), again.value());
        QCOMPARE(firstValueText(*m_db.database, QStringLiteral("SELECT reason FROM fence_epochs WHERE epoch = ?"),
                                {again.value()}),
                 QStringLiteral("below_largest"));
    }

    void concurrentCallersEachGetTheirOwn()
    {
        sql::SqlFenceEpochSource epochs(*m_db.database);
        const quint32 before = epochs.largestEpoch().value();
        std::mutex mutex;
        std::set<quint32> seen;
        int errors = 0;
        runConcurrently(16, [&](int i) {
            for (int round = 0; round < 5; ++round) {
                auto epoch = epochs.newEpoch(QStringLiteral("run-id-race-%1").arg(i % 2),
                                             QStringLiteral("no_fence_state"));
                std::lock_guard guard(mutex);
                if (epoch && epoch.value() > before)
                    seen.insert(epoch.value());
                else
                    ++errors;
            }
        });
        QCOMPARE(errors, 0);
        QCOMPARE(seen.size(), size_t(80));
        QCOMPARE(epochs.largestEpoch().value(), *seen.rbegin());
    }

    void badArgumentsAreRefused()
    {
        sql::SqlFenceEpochSource epochs(*m_db.database);
        const QString reason = QStringLiteral("no_fence_state");
        QCOMPARE(epochs.newEpoch(QString(), reason).error().code, core::ErrorCode::InvalidInput);
        QCOMPARE(epochs.newEpoch(QString(200, u'x'), reason).error().code, core::ErrorCode::InvalidInput);
        QCOMPARE(epochs.newEpoch(QStringLiteral("run-id-c"), QString()).error().code, core::ErrorCode::InvalidInput);
        QCOMPARE(epochs.newEpoch(QStringLiteral("run-id-c"), QString(40, u'r')).error().code,
                 core::ErrorCode::InvalidInput);
    }

private:
    MigratedDatabase m_db;
};

QTEST_GUILESS_MAIN(TestFenceEpochs)
#include "tst_fenceepochs.moc"
