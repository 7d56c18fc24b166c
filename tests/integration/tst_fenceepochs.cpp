// The epoch half of fencing tokens, from the database: a key-store instance seen for the
// first time gets a larger epoch than any before it; agents that see the same instance at
// once agree on one epoch.

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
    void initTestCase()
    {
        QString error;
        m_db = MigratedDatabase::start(dialectUnderTest(), &error);
        QVERIFY2(m_db, qPrintable(error));
    }

    void sameInstanceSameEpochNewInstanceLarger()
    {
        sql::SqlFenceEpochSource epochs(*m_db.database);
        auto first = epochs.epochFor(QStringLiteral("run-id-a"));
        QVERIFY2(first.ok(), qPrintable(first.ok() ? QString() : first.error().internalMessage));
        QCOMPARE(epochs.epochFor(QStringLiteral("run-id-a")).value(), first.value());
        auto second = epochs.epochFor(QStringLiteral("run-id-b"));
        QVERIFY(second.ok());
        QVERIFY(second.value() > first.value());
        // Seeing the old instance again (a failback) does not move the epoch backwards for
        // anyone who already uses the newer one: it keeps its own, smaller epoch.
        QCOMPARE(epochs.epochFor(QStringLiteral("run-id-a")).value(), first.value());
    }

    void agentsSeeingOneNewInstanceAgree()
    {
        sql::SqlFenceEpochSource epochs(*m_db.database);
        for (int round = 0; round < 10; ++round) {
            const QString instance = QStringLiteral("run-id-race-%1").arg(round);
            std::mutex mutex;
            std::set<quint32> seen;
            int errors = 0;
            runConcurrently(16, [&](int) {
                auto epoch = epochs.epochFor(instance);
                std::lock_guard guard(mutex);
                if (epoch)
                    seen.insert(epoch.value());
                else
                    ++errors;
            });
            QCOMPARE(errors, 0);
            QCOMPARE(seen.size(), size_t(1));
        }
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM fence_epochs WHERE instance_id LIKE 'run-id-race-%'")),
                 qint64(10));
    }

    void badInstanceIdIsRefused()
    {
        sql::SqlFenceEpochSource epochs(*m_db.database);
        QCOMPARE(epochs.epochFor(QString()).error().code, core::ErrorCode::InvalidInput);
        QCOMPARE(epochs.epochFor(QString(200, u'x')).error().code, core::ErrorCode::InvalidInput);
    }

private:
    MigratedDatabase m_db;
};

QTEST_GUILESS_MAIN(TestFenceEpochs)
#include "tst_fenceepochs.moc"
