#include "sql/migrationrunner.h"

#include <QTest>

#include <algorithm>

using payonce::sql::MigrationRunner;

class TestMigrationSplitter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void split_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QStringList>("statements");
        QTest::newRow("two statements") << QStringLiteral("CREATE TABLE a (x INT);\nCREATE TABLE b (y INT);\n")
                                        << QStringList{QStringLiteral("CREATE TABLE a (x INT)"),
                                                       QStringLiteral("CREATE TABLE b (y INT)")};
        QTest::newRow("semicolon in a string") << QStringLiteral("INSERT INTO t VALUES ('a;b', 'it''s;');")
                                               << QStringList{QStringLiteral("INSERT INTO t VALUES ('a;b', 'it''s;')")};
        QTest::newRow("semicolon in a comment")
            << QStringLiteral("-- one; two\nSELECT 1;") << QStringList{QStringLiteral("SELECT 1")};
        QTest::newRow("sqlite trigger block")
            << QStringLiteral(
                   "CREATE TRIGGER t BEFORE UPDATE ON a\nBEGIN\n  SELECT RAISE(ABORT, 'no');\nEND;\nSELECT 2;")
            << QStringList{
                   QStringLiteral("CREATE TRIGGER t BEFORE UPDATE ON a\nBEGIN\n  SELECT RAISE(ABORT, 'no');\nEND"),
                   QStringLiteral("SELECT 2")};
        QTest::newRow("postgres dollar body")
            << QStringLiteral("CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  RAISE EXCEPTION "
                              "'x';\nEND;\n$$;\nSELECT 3;")
            << QStringList{QStringLiteral("CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  RAISE "
                                          "EXCEPTION 'x';\nEND;\n$$"),
                           QStringLiteral("SELECT 3")};
        QTest::newRow("tagged dollar body") << QStringLiteral("DO $body$ BEGIN PERFORM 1; END $body$;")
                                            << QStringList{QStringLiteral("DO $body$ BEGIN PERFORM 1; END $body$")};
        QTest::newRow("mariadb single-statement trigger")
            << QStringLiteral("CREATE TRIGGER t BEFORE DELETE ON a FOR EACH ROW\n  SIGNAL SQLSTATE '45000' SET "
                              "MESSAGE_TEXT = 'no';\nSELECT 4;")
            << QStringList{QStringLiteral("CREATE TRIGGER t BEFORE DELETE ON a FOR EACH ROW\n  SIGNAL SQLSTATE '45000' "
                                          "SET MESSAGE_TEXT = 'no'"),
                           QStringLiteral("SELECT 4")};
        QTest::newRow("a column named begin_at is not a block")
            << QStringLiteral("CREATE TABLE x (begin_at INT, ending INT);\nSELECT 5;")
            << QStringList{QStringLiteral("CREATE TABLE x (begin_at INT, ending INT)"), QStringLiteral("SELECT 5")};
        QTest::newRow("trailing statement without semicolon")
            << QStringLiteral("SELECT 6") << QStringList{QStringLiteral("SELECT 6")};
        QTest::newRow("empty") << QStringLiteral("  \n-- nothing\n") << QStringList{};
    }
    void split()
    {
        QFETCH(QString, sql);
        QFETCH(QStringList, statements);
        QCOMPARE(MigrationRunner::splitStatements(sql), statements);
    }

    // Every bundled migration splits into statements that each start with a SQL verb: a
    // splitter bug would cut a trigger or function body in half.
    void bundledMigrationsSplitCleanly()
    {
        using Dialect = payonce::sql::Dialect;
        for (Dialect d : {Dialect::Sqlite, Dialect::PostgreSql, Dialect::MariaDb}) {
            const auto migrations = MigrationRunner::bundled(d);
            QVERIFY(!migrations.isEmpty());
            for (const auto &m : migrations) {
                const QStringList statements = MigrationRunner::splitStatements(m.sql);
                QVERIFY(!statements.isEmpty());
                if (m.version == 1)
                    QVERIFY(statements.size() > 30); // 17 tables, their indexes and triggers
                static const QStringList verbs{QStringLiteral("CREATE "), QStringLiteral("ALTER "),
                                               QStringLiteral("INSERT "), QStringLiteral("UPDATE "),
                                               QStringLiteral("DROP ")};
                for (const QString &s : statements) {
                    const bool known = std::any_of(verbs.begin(), verbs.end(),
                                                   [&](const QString &verb) { return s.startsWith(verb); });
                    QVERIFY2(known, qPrintable(m.name + u": " + s.left(60)));
                }
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestMigrationSplitter)
#include "tst_migrationsplitter.moc"
