// Migrations on each dialect: a fresh database gets every bundled migration once; a second
// run changes nothing; agents migrating at once apply each step once; a database from a
// newer payonce, or with an edited migration, is refused with a clear error; a database of
// an older payonce keeps its data through the migrations it has not had (the stock ledger's
// give-backs, written under order numbers of their own before 004, move to their order).

#include "storagefixture.h"

#include "sql/migrationrunner.h"

#include <QTest>

#include <atomic>
#include <mutex>

using namespace payonce;
using namespace payonce::testsupport;

class TestMigrations : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        QString error;
        m_server = TestDatabase::start(dialectUnderTest(), &error);
        QVERIFY2(m_server, qPrintable(error));
        auto url = config::DatabaseUrl::parse(m_server->url());
        QVERIFY(url.ok());
        m_database = std::make_unique<sql::Database>(sql::DatabaseOptions{url.value(), 5000, 8});
    }
    void cleanup()
    {
        m_database.reset();
        m_server.reset();
    }

    void freshDatabaseGetsEverythingOnce()
    {
        const auto bundled = sql::MigrationRunner::bundled(m_database->dialect());
        QVERIFY(!bundled.isEmpty());
        sql::MigrationRunner runner(*m_database);
        auto first = runner.migrate();
        QVERIFY2(first.ok(), qPrintable(first.ok() ? QString() : first.error().internalMessage));
        QCOMPARE(first.value(), int(bundled.size()));

        auto second = runner.migrate();
        QVERIFY(second.ok());
        QCOMPARE(second.value(), 0);
        QCOMPARE(countRows(*m_database, QStringLiteral("SELECT COUNT(*) FROM schema_migrations")),
                 qint64(bundled.size()));
        QCOMPARE(runner.currentVersion().value(), bundled.last().version);

        // Every table docs/design.md names exists (a COUNT on each succeeds).
        for (const char *table :
             {"orders", "order_items", "skus", "idempotency_keys", "payment_records", "pay_callback_log",
              "callback_deliveries", "stock_log", "user_coupon", "point_log", "outbox", "findings", "compensations",
              "audit_log", "settings", "qa_runs", "fence_epochs", "refunds"}) {
            QString error;
            const qint64 n = countRows(*m_database, QStringLiteral("SELECT COUNT(*) FROM ") + QLatin1String(table), {},
                                       &error);
            QVERIFY2(n == 0, qPrintable(QLatin1String(table) + u' ' + error));
        }
    }

    // 003 changed the findings' kind CHECK (a table rebuild on SQLite, a column redefinition
    // on MariaDB): the new kind is accepted, an unknown one still refused, the unique key
    // (kind, subject) and the reference from compensations still hold.
    void findingsKeepTheirConstraintsAfterTheKindChange()
    {
        sql::MigrationRunner runner(*m_database);
        auto migrated = runner.migrate();
        QVERIFY2(migrated.ok(), qPrintable(migrated.ok() ? QString() : migrated.error().internalMessage));
        auto insert = [&](const QString &kind, const QString &subject) {
            return m_database->write([&](sql::Session &session) -> core::Result<void> {
                auto done = session.exec(
                    QStringLiteral("INSERT INTO findings (kind, subject, evidence, status, first_seen_at, "
                                   "last_seen_at) VALUES (?, ?, '{}', 'open', 1, 1)"),
                    {kind, subject});
                if (!done)
                    return done.error();
                return {};
            });
        };
        QVERIFY(insert(QStringLiteral("refund_failed"), QStringLiteral("refund:RF1")).ok());
        QVERIFY(insert(QStringLiteral("double_payment"), QStringLiteral("wechat:1")).ok());
        QVERIFY(!insert(QStringLiteral("gremlins"), QStringLiteral("x")).ok());
        QVERIFY(!insert(QStringLiteral("refund_failed"), QStringLiteral("refund:RF1")).ok());
        auto dangling = m_database->write([&](sql::Session &session) -> core::Result<void> {
            auto done = session.exec(QStringLiteral("INSERT INTO compensations (kind, order_no, finding_id, status, "
                                                    "proposed_by, proposal_reason, created_at, updated_at) "
                                                    "VALUES ('refund', 'ORD-X', 987654, 'proposed', 'x', 'y', 1, 1)"));
            if (!done)
                return done.error();
            return {};
        });
        QVERIFY2(!dangling.ok(), "a compensation naming a finding that does not exist was accepted");
    }

    void concurrentAgentsApplyOnce()
    {
        const auto bundled = sql::MigrationRunner::bundled(m_database->dialect());
        std::atomic<int> applied{0}, failed{0};
        std::mutex mutex;
        QStringList failures; // what each failed runner said: a failure must explain itself
        runConcurrently(6, [&](int) {
            sql::MigrationRunner runner(*m_database);
            auto result = runner.migrate();
            if (result) {
                applied += result.value();
                return;
            }
            ++failed;
            std::lock_guard guard(mutex);
            failures << result.error().internalMessage;
        });
        QVERIFY2(failed.load() == 0, qPrintable(failures.join(QStringLiteral("; "))));
        QCOMPARE(applied.load(), int(bundled.size()));
        QCOMPARE(countRows(*m_database, QStringLiteral("SELECT COUNT(*) FROM schema_migrations")),
                 qint64(bundled.size()));
    }

    void legacyGiveBacksMoveToTheirOrder()
    {
        // A database as payonce left it before 004: migrations 1-3 applied by hand (the
        // runner knows only "everything"), a refunded order and a restore_stock whose
        // give-backs sit under 'refund:<refund_no>' and 'reversal:<id>'.
        const bool sqlite = m_database->dialect() == sql::Dialect::Sqlite;
        const auto bundled = sql::MigrationRunner::bundled(m_database->dialect());
        QVERIFY(bundled.size() > 4 && bundled.at(3).version == 4);
        QVERIFY(m_database->connect().ok());
        auto old = m_database->write([&](sql::Session &s) -> core::Result<void> {
            const QString table =
                sqlite ? QStringLiteral(
                    "CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
                    "checksum TEXT NOT NULL, applied_at INTEGER NOT NULL)")
                       : QStringLiteral(
                           "CREATE TABLE schema_migrations (version BIGINT NOT NULL PRIMARY KEY, name VARCHAR(128) "
                           "NOT NULL, checksum VARCHAR(64) NOT NULL, applied_at BIGINT NOT NULL)");
            if (auto made = s.exec(table); !made)
                return made.error();
            for (int i = 0; i < 3; ++i) {
                for (const QString &statement : sql::MigrationRunner::splitStatements(bundled.at(i).sql)) {
                    if (auto done = s.exec(statement); !done)
                        return done.error();
                }
                if (auto stamped = s.exec(
                        QStringLiteral("INSERT INTO schema_migrations (version, name, checksum, "
                                       "applied_at) VALUES (?, ?, ?, 1)"),
                        {bundled.at(i).version, bundled.at(i).name, QString::fromLatin1(bundled.at(i).checksum)});
                    !stamped)
                    return stamped.error();
            }
            for (const char *sql :
                 {"INSERT INTO orders (order_no, user_id, amount_fen, status, version, fence, created_at, updated_at) "
                  "VALUES ('ORD-OLD-1', 1, 100, 'REFUNDED', 3, 1, 1, 1)",
                  "INSERT INTO orders (order_no, user_id, amount_fen, status, version, fence, created_at, updated_at) "
                  "VALUES ('ORD-OLD-2', 1, 100, 'CLOSED', 2, 1, 1, 1)",
                  "INSERT INTO compensations (id, kind, order_no, status, proposed_by, proposal_reason, created_at, "
                  "updated_at) VALUES (7, 'refund', 'ORD-OLD-1', 'executed', 'a', 'r', 1, 1)",
                  "INSERT INTO compensations (id, kind, order_no, status, proposed_by, proposal_reason, created_at, "
                  "updated_at) VALUES (8, 'restore_stock', 'ORD-OLD-2', 'executed', 'a', 'r', 1, 1)",
                  "INSERT INTO refunds (refund_no, compensation_id, order_no, channel, pay_no, payment_no, amount_fen, "
                  "total_fen, own_payment, status, attempts, created_at, updated_at) VALUES ('RF000000000000000007', "
                  "7, "
                  "'ORD-OLD-1', 'wechat', 'P1', 'PN1', 100, 100, 1, 'succeeded', 1, 1, 1)",
                  "INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) VALUES ('ORD-OLD-1', 'SKU-1', 2, "
                  "1, 1)",
                  "INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) "
                  "VALUES ('refund:RF000000000000000007', 'SKU-1', -2, 1, 2)",
                  "INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) VALUES ('ORD-OLD-2', 'SKU-2', 1, "
                  "1, 1)",
                  "INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) VALUES ('reversal:8', 'SKU-2', -1, "
                  "1, 2)"}) {
                if (auto done = s.exec(QString::fromLatin1(sql)); !done)
                    return done.error();
            }
            return {};
        });
        QVERIFY2(old.ok(), qPrintable(old.ok() ? QString() : old.error().internalMessage));
        sql::MigrationRunner runner(*m_database);
        auto migrated = runner.migrate();
        QVERIFY2(migrated.ok(), qPrintable(migrated.ok() ? QString() : migrated.error().internalMessage));
        QCOMPARE(migrated.value(), int(bundled.size()) - 3);
        auto rows = [&](const char *sql) { return countRows(*m_database, QString::fromLatin1(sql)); };
        QCOMPARE(rows("SELECT COUNT(*) FROM stock_log WHERE order_no LIKE 'refund:%' OR order_no LIKE 'reversal:%'"),
                 qint64(0));
        QCOMPARE(rows("SELECT COUNT(*) FROM stock_log WHERE order_no = 'ORD-OLD-1' AND entry_key = "
                      "'refund:RF000000000000000007' "
                      "AND reason = 'refund' AND qty = -2"),
                 qint64(1));
        QCOMPARE(rows("SELECT COUNT(*) FROM stock_log WHERE order_no = 'ORD-OLD-2' AND entry_key = 'reversal:8' "
                      "AND reason = 'restore_stock' AND qty = -1"),
                 qint64(1));
        QCOMPARE(rows("SELECT COUNT(*) FROM stock_log WHERE entry_key = 'take' AND reason = 'paid' AND qty > 0"),
                 qint64(2));
        QCOMPARE(
            firstValueText(*m_database, QStringLiteral("SELECT SUM(qty) FROM stock_log WHERE order_no = 'ORD-OLD-1'")),
            QStringLiteral("0"));
        // The new key holds: the same give-back again is refused by the unique index.
        auto again = m_database->write([](sql::Session &s) -> core::Result<void> {
            auto done = s.exec(
                QStringLiteral("INSERT INTO stock_log (order_no, sku_id, entry_key, reason, qty, fence, "
                               "created_at) VALUES ('ORD-OLD-2', 'SKU-2', 'reversal:8', 'restore_stock', -1, 1, 3)"));
            if (!done)
                return done.error();
            return {};
        });
        QVERIFY(!again.ok());
        QCOMPARE(again.error().code, core::ErrorCode::Duplicate);
    }

    void newerSchemaIsRefused()
    {
        sql::MigrationRunner runner(*m_database);
        QVERIFY(runner.migrate().ok());
        auto stamped = m_database->write([](sql::Session &s) -> core::Result<void> {
            auto done = s.exec(QStringLiteral("INSERT INTO schema_migrations (version, name, checksum, applied_at) "
                                              "VALUES (999, '999_from_the_future', 'x', 0)"));
            if (!done)
                return done.error();
            return {};
        });
        QVERIFY(stamped.ok());
        auto refused = runner.migrate();
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, core::ErrorCode::SchemaTooNew);
        QVERIFY2(refused.error().internalMessage.contains(u"999"), qPrintable(refused.error().internalMessage));
    }

    void editedMigrationIsRefused()
    {
        sql::MigrationRunner runner(*m_database);
        QVERIFY(runner.migrate().ok());
        auto edited = m_database->write([](sql::Session &s) -> core::Result<void> {
            auto done = s.exec(QStringLiteral("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1"));
            if (!done)
                return done.error();
            return {};
        });
        QVERIFY(edited.ok());
        auto refused = runner.migrate();
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, core::ErrorCode::Misconfigured);
        QVERIFY(refused.error().internalMessage.contains(u"001_initial"));
    }

private:
    std::unique_ptr<TestDatabase> m_server;
    std::unique_ptr<sql::Database> m_database;
};

QTEST_GUILESS_MAIN(TestMigrations)
#include "tst_migrations.moc"
