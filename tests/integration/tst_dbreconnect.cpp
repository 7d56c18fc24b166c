// A PostgreSQL or MariaDB server restarted under connected code: the next operation on
// every thread's connection reconnects by itself and succeeds; while the server is down,
// operations fail with Unavailable instead of hanging.

#include "storagefixture.h"

#include "sql/sqlorders.h"

#include <QElapsedTimer>
#include <QTest>

#include <atomic>

using namespace payonce;
using namespace payonce::testsupport;

Q_DECLARE_METATYPE(payonce::testsupport::Dialect)

class TestDbReconnect : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void restartUnderConnectedCode_data()
    {
        QTest::addColumn<Dialect>("dialect");
        QTest::newRow("postgresql") << Dialect::PostgreSql;
        QTest::newRow("mariadb") << Dialect::MariaDb;
    }
    void restartUnderConnectedCode()
    {
        QFETCH(Dialect, dialect);
        QString error;
        MigratedDatabase db = MigratedDatabase::start(dialect, &error);
        QVERIFY2(db, qPrintable(error));
        sql::SqlOrders orders(*db.database);

        // Four threads hold open connections before the restart (the pool of an agent).
        constexpr int threads = 4;
        auto createOrders = [&](const QString &prefix) {
            std::atomic<int> failures{0};
            runConcurrently(threads, [&](int i) {
                sql::NewOrder order;
                order.orderNo = prefix + QString::number(i);
                order.userId = 1;
                order.amountFen = 100;
                if (!orders.create(order))
                    ++failures;
            });
            return failures.load();
        };
        QCOMPARE(createOrders(QStringLiteral("BEFORE-")), 0);

        QVERIFY2(db.server->stop(), "cannot stop the server");
        QElapsedTimer downtime;
        downtime.start();
        sql::NewOrder whileDown;
        whileDown.orderNo = QStringLiteral("WHILE-DOWN");
        whileDown.userId = 1;
        whileDown.amountFen = 100;
        auto refused = orders.create(whileDown);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, core::ErrorCode::Unavailable);
        // A bound, not a benchmark: retries with a 5 s connect timeout must not hang.
        QVERIFY2(downtime.elapsed() < 120000, "an operation against a stopped server hung");

        QVERIFY2(db.server->startAgain(&error), qPrintable(error));
        // The same threads' connections are dead; the next operation on each reconnects.
        QCOMPARE(createOrders(QStringLiteral("AFTER-")), 0);
        QCOMPARE(countRows(*db.database, QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no LIKE 'AFTER-%'")),
                 qint64(threads));
        QCOMPARE(countRows(*db.database, QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = 'WHILE-DOWN'")),
                 qint64(0));
    }
};

QTEST_GUILESS_MAIN(TestDbReconnect)
#include "tst_dbreconnect.moc"
