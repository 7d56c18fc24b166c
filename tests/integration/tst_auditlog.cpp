// The audit trail is append-only in the database itself: UPDATE and DELETE are refused by
// triggers on every dialect, whoever issues them.

#include "storagefixture.h"

#include "sql/sqlauditwriter.h"

#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

class TestAuditLog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_db.start(), m_db.error()); }

    void appendsAndReadsBack()
    {
        sql::SqlAuditWriter audit(*m_db.database);
        auto first = audit.append({QStringLiteral("alice"), QStringLiteral("breaker.force_open"),
                                   QStringLiteral("breaker:gateway.wechat"), QStringLiteral("{\"mode\":\"auto\"}"),
                                   QStringLiteral("{\"mode\":\"forced_open\"}"), QStringLiteral("gateway timeouts"),
                                   QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736")});
        QVERIFY2(first.ok(), qPrintable(first.ok() ? QString() : first.error().internalMessage));
        auto second = audit.append({QStringLiteral("bob"),
                                    QStringLiteral("compensation.approve"),
                                    QStringLiteral("compensation:1"),
                                    {},
                                    {},
                                    QStringLiteral("checked"),
                                    {}});
        QVERIFY(second.ok());
        QVERIFY(second.value() > first.value());
        QCOMPARE(countRows(*m_db.database,
                           QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE actor = ? AND reason = ?"),
                           {QStringLiteral("alice"), QStringLiteral("gateway timeouts")}),
                 qint64(1));
    }

    void incompleteEntryIsRefused()
    {
        sql::SqlAuditWriter audit(*m_db.database);
        const qint64 before = countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM audit_log"));
        auto refused = audit.append(
            {QStringLiteral("alice"), QStringLiteral("x.y"), QStringLiteral("t"), {}, {}, {}, {}});
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, core::ErrorCode::InvalidInput);
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM audit_log")), before);
    }

    void updateAndDeleteAreRefusedByTheDatabase_data()
    {
        QTest::addColumn<QString>("statement");
        QTest::newRow("update") << QStringLiteral("UPDATE audit_log SET reason = 'rewritten'");
        QTest::newRow("delete") << QStringLiteral("DELETE FROM audit_log");
        QTest::newRow("delete one") << QStringLiteral("DELETE FROM audit_log WHERE actor = 'alice'");
    }
    void updateAndDeleteAreRefusedByTheDatabase()
    {
        QFETCH(QString, statement);
        const qint64 before = countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM audit_log"));
        QVERIFY(before > 0);
        auto refused = m_db.database->write([&](sql::Session &s) -> core::Result<void> {
            auto done = s.exec(statement);
            if (!done)
                return done.error();
            return {};
        });
        QVERIFY2(!refused.ok(), "the database accepted a change to the audit log");
        QVERIFY2(refused.error().internalMessage.contains(u"append-only"), qPrintable(refused.error().internalMessage));
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM audit_log")), before);
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE reason = 'rewritten'")),
                 qint64(0));
    }

private:
    MigratedDatabase m_db;
};

QTEST_GUILESS_MAIN(TestAuditLog)
#include "tst_auditlog.moc"
