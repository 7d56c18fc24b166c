#pragma once

#include "core/ports/fenceepochsource.h"
#include "sql/database.h"
#include "sql/sqlfenceepochsource.h"
#include "support/serverharness.h"

#include <QString>

#include <memory>

namespace payonce::testsupport {

/// The database of the dialect under test, started, connected and migrated: the common
/// start of every storage suite. On failure, *error says why (with the server's log tail).
struct MigratedDatabase {
    std::unique_ptr<TestDatabase> server;
    std::unique_ptr<sql::Database> database;

    static MigratedDatabase start(Dialect dialect, QString *error);
    explicit operator bool() const { return server && database; }
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

/// Runs `body(i)` on `threads` threads released at the same instant (a latch), and waits
/// for all of them. Concurrency claims in the storage suites are made with this.
void runConcurrently(int threads, const std::function<void(int)> &body);

/// SELECT COUNT(*) with binds, on the calling thread; -1 on error (the test then fails
/// on the comparison, with the error in *error).
qint64 countRows(sql::Database &database, const QString &sql, const QVariantList &binds = {}, QString *error = nullptr);

/// The first column of the first row as text (empty when there is no row), on the calling
/// thread; "<error: …>" on error, so the test fails on the comparison with the reason.
QString firstValueText(sql::Database &database, const QString &sql, const QVariantList &binds = {});

/// One write statement (test set-up by raw SQL) in its own transaction.
core::Result<void> execSql(sql::Database &database, const QString &sql, const QVariantList &binds = {});

} // namespace payonce::testsupport
