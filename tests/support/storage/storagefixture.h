#pragma once

#include "core/ports/fenceepochsource.h"
#include "sql/database.h"
#include "sql/sqlfenceepochsource.h"
#include "sql/sqlorders.h"
#include "support/serverharness.h"

#include <QByteArray>
#include <QString>

#include <atomic>
#include <memory>
#include <mutex>

namespace payonce::testsupport {

/// The database of the dialect under test, started, connected and migrated: the common
/// start of every storage suite. On failure, *error says why (with the server's log tail).
struct MigratedDatabase {
    std::unique_ptr<TestDatabase> server;
    std::unique_ptr<sql::Database> database;

    static MigratedDatabase start(Dialect dialect, QString *error);
    /// The same into this object, as a suite's initTestCase() or init() starts it:
    /// QVERIFY2(m_db.start(), m_db.error()). False with error() saying why.
    bool start(Dialect dialect = dialectUnderTest());
    /// Why the last start() failed.
    const char *error() const { return m_error.constData(); }
    explicit operator bool() const { return server && database; }

private:
    QByteArray m_error;
};

/// The real fence-epoch source — fence_epochs in a migrated SQLite file of its own — for
/// suites that need epochs but are not about SQL (the key store's). If the database
/// cannot be made, every call fails with the reason, and so does the test.
class SqliteFenceEpochs final : public core::FenceEpochSource {
public:
    SqliteFenceEpochs();
    core::Result<quint32> newEpoch(const QString &keyStoreInstanceId, const QString &reason) override;
    core::Result<quint32> largestEpoch() override;

private:
    core::Error unmade() const;
    MigratedDatabase m_db;
    QString m_error;
    std::unique_ptr<sql::SqlFenceEpochSource> m_source;
};

/// Counts of what racing threads were told (won: it was theirs, lost: another's), and the
/// first unexpected error verbatim.
struct RaceTally {
    std::atomic<int> won{0};
    std::atomic<int> lost{0};
    std::atomic<int> errors{0};
    std::mutex mutex;
    QString firstError;

    void error(const core::Error &e);
    /// A thread's answer: an error, or whether it won.
    void count(const core::Result<bool> &mine);
};

/// An order of `userId` for 99.00: one unit of SKU1.
sql::NewOrder oneUnitOrder(const QString &orderNo, qint64 userId = 10086);

/// An order with one of each effect for the callback path to make — the reward coupon
/// WELCOME10 and 100 points — and `quantity` units of skuId.
sql::NewOrder rewardedOrder(const QString &orderNo, qint64 userId, qint64 amountFen, const QString &skuId,
                            qint64 quantity);
/// Creates the order (sql::SqlOrders); false and a warning when it was not made.
bool createOrder(sql::Database &database, const sql::NewOrder &order);

/// Runs `body(i)` on `threads` threads released at the same instant (a latch), and waits
/// for all of them. Concurrency claims in the storage suites are made with this.
void runConcurrently(int threads, const std::function<void(int)> &body);

/// SELECT COUNT(*) with binds, on the calling thread; -1 on error (the test then fails
/// on the comparison, with the error in *error).
qint64 countRows(sql::Database &database, const QString &sql, const QVariantList &binds = {}, QString *error = nullptr);

/// countRows() for a suite's own count(): -1 and a warning with the statement and the
/// database's reason on error (the test then fails on its comparison).
qint64 countRowsOrWarn(sql::Database &database, const QString &sql, const QVariantList &binds = {});

/// The first column of the first row as text (empty when there is no row), on the calling
/// thread; "<error: …>" on error, so the test fails on the comparison with the reason.
QString firstValueText(sql::Database &database, const QString &sql, const QVariantList &binds = {});

/// One write statement (test set-up by raw SQL) in its own transaction.
core::Result<void> execSql(sql::Database &database, const QString &sql, const QVariantList &binds = {});

} // namespace payonce::testsupport
