// Migrations on each dialect: a fresh database gets every bundled migration once; a second
// run changes nothing; agents migrating at once apply each step once; a database from a
// newer payonce, or with an edited migration, is refused with a clear error.

#include "storagefixture.h"

#include "sql/migrationrunner.h"

#include <QTest>

#include <atomic>

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
        for (const char *table : {"orders", "order_items", "skus", "idempotency_keys", "payment_records",
                                  "pay_callback_log", "callback_deliveries", "stock_log", "user_coupon", "point_log",
                                  "outbox", "findings", "compensations", "audit_log", "settings", "qa_runs",
                                  "fence_epochs", "refunds"}) {
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
                auto done = session.exec(QStringLiteral("INSERT INTO findings (kind, subject, evidence, status, first_seen_at, "
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
        runConcurrently(6, [&](int) {
            sql::MigrationRunner runner(*m_database);
            auto result = runner.migrate();
            if (result)
                applied += result.value();
            else
                ++failed;
        });
        QCOMPARE(failed.load(), 0);
        QCOMPARE(applied.load(), int(bundled.size()));
        QCOMPARE(countRows(*m_database, QStringLiteral("SELECT COUNT(*) FROM schema_migrations")),
                 qint64(bundled.size()));
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
