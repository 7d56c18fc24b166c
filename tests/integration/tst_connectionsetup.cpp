// What every database connection is set to before the agent uses it, on each dialect and
// on every thread (each thread has its own connection): READ COMMITTED and UTC on the
// servers — the races docs/design.md "Storage" describes were measured under MariaDB's
// default REPEATABLE READ —, MariaDB's lock wait bound and strict mode; SQLite's WAL,
// synchronous=FULL (a lost `accepted` row is a payment the platform never re-sends),
// foreign keys, and a page cache bounded by payonce rather than by the library's build
// (docs/design.md "Memory").

#include "storagefixture.h"

#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <atomic>
#include <mutex>

#include <memory>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

struct Expected {
    QString sql;
    QString value;
};

QList<Expected> expectedSettings(config::DatabaseUrl::Dialect dialect)
{
    switch (dialect) {
    case config::DatabaseUrl::Dialect::Sqlite:
        return {{QStringLiteral("PRAGMA journal_mode"), QStringLiteral("wal")},
                {QStringLiteral("PRAGMA synchronous"), QStringLiteral("2")}, // FULL
                {QStringLiteral("PRAGMA foreign_keys"), QStringLiteral("1")},
                {QStringLiteral("PRAGMA cache_size"), QString::number(-sql::Database::kSqlitePageCacheKiB)}};
    case config::DatabaseUrl::Dialect::PostgreSql:
        return {{QStringLiteral("SHOW transaction_isolation"), QStringLiteral("read committed")},
                {QStringLiteral("SHOW TimeZone"), QStringLiteral("UTC")}};
    case config::DatabaseUrl::Dialect::MariaDb:
        return {{QStringLiteral("SELECT @@SESSION.tx_isolation"), QStringLiteral("READ-COMMITTED")},
                {QStringLiteral("SELECT @@SESSION.innodb_lock_wait_timeout"),
                 QString::number(sql::Database::kLockWaitTimeoutSeconds)},
                {QStringLiteral("SELECT @@SESSION.sql_mode"),
                 QStringLiteral("STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ENGINE_SUBSTITUTION")},
                {QStringLiteral("SELECT @@SESSION.time_zone"), QStringLiteral("+00:00")}};
    }
    return {};
}

} // namespace

class TestConnectionSetup : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { QVERIFY2(m_db.start(), m_db.error()); }
    void cleanup()
    {
        // The connections close before their server stops.
        m_db.database.reset();
        m_db.server.reset();
    }

    void everyThreadsConnectionIsSetUp()
    {
        const QList<Expected> expected = expectedSettings(m_db.database->dialect());
        QVERIFY(!expected.isEmpty());
        for (const Expected &setting : expected)
            QCOMPARE(firstValueText(*m_db.database, setting.sql), setting.value);

        // A second thread opens a connection of its own: it is set up the same way.
        QStringList seen;
        std::unique_ptr<QThread> other(QThread::create([&] {
            for (const Expected &setting : expected)
                seen << firstValueText(*m_db.database, setting.sql);
        }));
        other->start();
        QVERIFY(other->wait(30000));
        QCOMPARE(seen.size(), expected.size());
        for (qsizetype i = 0; i < expected.size(); ++i)
            QCOMPARE(seen.at(i), expected.at(i).value);
    }

    // Agents and pools open their connections all at once at start. On SQLite, the first
    // connections of a fresh file race to switch it to WAL, which needs the file to
    // themselves: a connection that loses is told "database is locked" at once (SQLite does
    // not wait when waiting could deadlock). Every connection must still be set up.
    void connectionsOpenedAtOnceAreAllSetUp()
    {
        constexpr int kRounds = 40;
        constexpr int kThreads = 8;
        std::atomic<int> failed{0};
        std::mutex mutex;
        QString firstError;
        for (int round = 0; round < kRounds; ++round) {
            QTemporaryDir folder; // a fresh file each round on SQLite; the same server otherwise
            QVERIFY(folder.isValid());
            const bool sqlite = m_db.database->dialect() == config::DatabaseUrl::Dialect::Sqlite;
            sql::DatabaseOptions options = m_db.database->options();
            if (sqlite) {
                auto url = config::DatabaseUrl::parse(QStringLiteral("sqlite:")
                                                      + folder.filePath(QStringLiteral("fresh.db")));
                QVERIFY2(url.ok(), qPrintable(url.ok() ? QString() : url.error().internalMessage));
                options.url = url.value();
            }
            sql::Database database(options);
            runConcurrently(kThreads, [&](int) {
                const auto connected = database.connect();
                if (!connected) {
                    failed.fetch_add(1);
                    std::lock_guard guard(mutex);
                    if (firstError.isEmpty())
                        firstError = connected.error().internalMessage;
                }
            });
            if (sqlite)
                QCOMPARE(firstValueText(database, QStringLiteral("PRAGMA journal_mode")), QStringLiteral("wal"));
        }
        QVERIFY2(failed.load() == 0, qPrintable(QStringLiteral("%1 of %2 connections failed, the first: %3")
                                                    .arg(failed.load())
                                                    .arg(kRounds * kThreads)
                                                    .arg(firstError)));
    }

private:
    MigratedDatabase m_db;
};

QTEST_GUILESS_MAIN(TestConnectionSetup)
#include "tst_connectionsetup.moc"
