// A pool thread's Qt Sql connection is closed by its thread_local teardown, which runs
// after QThread::wait() has returned: a process that joins its pools and leaves main()
// at once tore Qt Sql's globals down under that teardown (the agent crashed on SIGTERM
// after "stopped", in QSqlDatabase::removeDatabase on a lane thread). The teardown is
// made slow here on purpose, as a connection's kept statements make it (a round trip
// each), and the test asks that no connection is left once the pool is joined and
// sql::Database::waitForThreadConnectionsClosed() — what the agent's main() calls before
// it returns — has returned true.

#include "sql/database.h"

#include <QCoreApplication>
#include <QSqlDatabase>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <chrono>
#include <thread>

using namespace payonce;

namespace {

/// Constructed after the thread's connection, so destroyed before it: the connection
/// closes this much later than the thread's join.
struct SlowTeardown {
    ~SlowTeardown() { std::this_thread::sleep_for(std::chrono::milliseconds(400)); }
};

} // namespace

class TestThreadConnectionTeardown : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void noConnectionOutlivesTheJoinedPool()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        sql::DatabaseOptions options;
        options.url.dialect = config::DatabaseUrl::Dialect::Sqlite;
        options.url.sqlitePath = dir.filePath(QStringLiteral("teardown.db"));
        sql::Database database(options);
        {
            QThreadPool pool;
            pool.start([&database] {
                auto written = database.write([](sql::Session &session) -> core::Result<void> {
                    if (auto made = session.exec(QStringLiteral("CREATE TABLE IF NOT EXISTS t (x INTEGER)")); !made)
                        return made.error();
                    auto inserted = session.execAffected(QStringLiteral("INSERT INTO t (x) VALUES (?)"), {1});
                    if (!inserted)
                        return inserted.error();
                    return {};
                });
                if (!written.ok())
                    qWarning() << "write failed:" << written.error().internalMessage;
                thread_local SlowTeardown slow;
                (void)slow;
            });
            QVERIFY(pool.waitForDone(10000));
        } // the pool's thread is joined; its thread_local teardown may still be running
        QVERIFY(sql::Database::waitForThreadConnectionsClosed(std::chrono::seconds(10)));
        QVERIFY2(QSqlDatabase::connectionNames().isEmpty(),
                 qPrintable(QSqlDatabase::connectionNames().join(QStringLiteral(", "))));
    }
};

QTEST_GUILESS_MAIN(TestThreadConnectionTeardown)
#include "tst_threadconnectionteardown.moc"
