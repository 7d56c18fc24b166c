// The storage layer's duplicate defences under real concurrency, once per dialect
// (registered as tst_storageconcurrency_sqlite / _postgresql / _mariadb):
// - L4: 32 threads insert one pay_no -> exactly 1 insert, 31 recognised duplicates.
// - L5: 32 threads CAS one order PENDING->PAID -> exactly one sees 1 affected row.
// - the same inside a larger transaction, with an insert-if-absent before the CAS.
// - fencing: two processes write one order with interleaved tokens; the older token's
//   writes are refused by the writing statement itself.
// A duplicate that slips through makes the counts differ and the test fail.

#include "storagefixture.h"

#include "core/orders/orderstatemachine.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlcallbacklog.h"
#include "sql/sqlorders.h"

#include <QProcess>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;
using core::OrderStatus;
using sql::InsertOutcome;
using sql::TransitionOutcome;

namespace {

constexpr int kThreads = 32;
constexpr int kRounds = 20;

int runFenceWriter(const QString &url, const QString &orderNo);

} // namespace

class TestStorageConcurrency : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_db.start(), m_db.error()); }

    void callbackLogInsertRace()
    {
        sql::SqlCallbackLog log(*m_db.database);
        for (int round = 0; round < kRounds; ++round) {
            const QString payNo = QStringLiteral("PAY-INSERT-%1").arg(round);
            RaceTally tally;
            runConcurrently(kThreads, [&](int) {
                auto outcome = log.insertAccepted(
                    {QStringLiteral("wechat"), payNo, QStringLiteral("ORD-X"), 9900, {}, {}});
                if (!outcome)
                    tally.error(outcome.error());
                else if (outcome.value() == InsertOutcome::Inserted)
                    tally.won.fetch_add(1);
                else
                    tally.lost.fetch_add(1);
            });
            QVERIFY2(tally.errors == 0, qPrintable(tally.firstError));
            QCOMPARE(tally.won.load(), 1);
            QCOMPARE(tally.lost.load(), kThreads - 1);
            QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"),
                               {payNo}),
                     qint64(1));
        }
    }

    void orderCasRace()
    {
        sql::SqlOrders orders(*m_db.database);
        for (int round = 0; round < kRounds; ++round) {
            const QString orderNo = QStringLiteral("ORD-CAS-%1").arg(round);
            QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
            RaceTally tally;
            runConcurrently(kThreads, [&](int) {
                auto outcome = m_db.database->write([&](sql::Session &s) {
                    return orders.transition(s, orderNo, OrderStatus::Pending, OrderStatus::Paid, 0);
                });
                if (!outcome)
                    tally.error(outcome.error());
                else if (outcome.value() == TransitionOutcome::Transitioned)
                    tally.won.fetch_add(1);
                else if (outcome.value() == TransitionOutcome::Lost)
                    tally.lost.fetch_add(1);
                else
                    tally.error(core::Error::make(core::ErrorCode::Internal, QStringLiteral("unexpected outcome")));
            });
            QVERIFY2(tally.errors == 0, qPrintable(tally.firstError));
            QCOMPARE(tally.won.load(), 1);
            QCOMPARE(tally.lost.load(), kThreads - 1);
            QCOMPARE(countRows(*m_db.database,
                               QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID' "
                                              "AND version = 1"),
                               {orderNo}),
                     qint64(1));
        }
    }

    // The callback path's shape: in ONE transaction, insert-if-absent the log row, then
    // CAS the order. Every thread runs both; the database lets one of each through.
    void insertIfAbsentAndCasInOneTransaction()
    {
        sql::SqlOrders orders(*m_db.database);
        sql::SqlCallbackLog log(*m_db.database);
        for (int round = 0; round < kRounds; ++round) {
            const QString orderNo = QStringLiteral("ORD-TX-%1").arg(round);
            const QString payNo = QStringLiteral("PAY-TX-%1").arg(round);
            QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
            std::atomic<int> inserted{0}, duplicates{0};
            RaceTally cas;
            runConcurrently(kThreads, [&](int) {
                // Counted only once the transaction committed: a retried attempt's
                // outcomes are discarded with its rollback.
                InsertOutcome insertOutcome{};
                TransitionOutcome casOutcome{};
                auto committed = m_db.database->write([&](sql::Session &s) -> core::Result<void> {
                    auto ins = log.insertAcceptedIfAbsent(s, {QStringLiteral("alipay"), payNo, orderNo, 9900, {}, {}});
                    if (!ins)
                        return ins.error();
                    auto tr = orders.transition(s, orderNo, OrderStatus::Pending, OrderStatus::Paid, 0);
                    if (!tr)
                        return tr.error();
                    insertOutcome = ins.value();
                    casOutcome = tr.value();
                    return {};
                });
                if (!committed) {
                    cas.error(committed.error());
                    return;
                }
                (insertOutcome == InsertOutcome::Inserted ? inserted : duplicates).fetch_add(1);
                if (casOutcome == TransitionOutcome::Transitioned)
                    cas.won.fetch_add(1);
                else
                    cas.lost.fetch_add(1);
            });
            QVERIFY2(cas.errors == 0, qPrintable(cas.firstError));
            QCOMPARE(inserted.load(), 1);
            QCOMPARE(duplicates.load(), kThreads - 1);
            QCOMPARE(cas.won.load(), 1);
            QCOMPARE(cas.lost.load(), kThreads - 1);
            QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"),
                               {payNo}),
                     qint64(1));
            QCOMPARE(countRows(*m_db.database,
                               QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND version = 1"),
                               {orderNo}),
                     qint64(1));
        }
    }

    // Every (from, to) pair through the real CAS: allowed edges move the row and bump the
    // version; refused edges never reach SQL and leave the row as it was.
    void stateMachineMatrix()
    {
        sql::SqlOrders orders(*m_db.database);
        int pair = 0;
        for (OrderStatus from : core::allOrderStatuses) {
            for (OrderStatus to : core::allOrderStatuses) {
                const QString orderNo = QStringLiteral("ORD-SM-%1").arg(pair++);
                QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
                auto set = m_db.database->write([&](sql::Session &s) -> core::Result<void> {
                    auto done = s.exec(QStringLiteral("UPDATE orders SET status = ? WHERE order_no = ?"),
                                       {core::orderStatusName(from), orderNo});
                    if (!done)
                        return done.error();
                    return {};
                });
                QVERIFY(set.ok());
                auto outcome = m_db.database->write(
                    [&](sql::Session &s) { return orders.transition(s, orderNo, from, to, 0); });
                const QString edge = core::orderStatusName(from) + QStringLiteral("->") + core::orderStatusName(to);
                const auto row = m_db.database->read([&](sql::Session &s) -> core::Result<sql::OrderRow> {
                    core::Error e;
                    auto found = orders.find(s, orderNo, &e);
                    if (!found)
                        return e;
                    return *found;
                });
                QVERIFY2(row.ok(), qPrintable(edge));
                if (core::OrderStateMachine::isAllowed(from, to)) {
                    QVERIFY2(outcome.ok() && outcome.value() == TransitionOutcome::Transitioned, qPrintable(edge));
                    QCOMPARE(row->status, to);
                    QCOMPARE(row->version, qint64(1));
                } else {
                    QVERIFY2(!outcome.ok() && outcome.error().code == core::ErrorCode::InvalidInput, qPrintable(edge));
                    QCOMPARE(row->status, from);
                    QCOMPARE(row->version, qint64(0));
                }
            }
        }
        // An allowed edge from the wrong current state loses the CAS and changes nothing.
        const QString orderNo = QStringLiteral("ORD-SM-WRONG-FROM");
        QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());
        auto outcome = m_db.database->write(
            [&](sql::Session &s) { return orders.transition(s, orderNo, OrderStatus::Paying, OrderStatus::Paid, 0); });
        QVERIFY(outcome.ok());
        QCOMPARE(outcome.value(), TransitionOutcome::Lost);
    }

    // Two OS processes, each with its own connection, write one order. Phase 1 interleaves
    // them deterministically; phase 2 lets them race. Every accepted write is logged in the
    // same transaction (audit_log, under the order's row lock), so the accepted tokens in
    // log order must strictly increase, and the newest token always wins.
    void fencingAcrossTwoProcesses()
    {
        const QString orderNo = QStringLiteral("ORD-FENCE");
        sql::SqlOrders orders(*m_db.database);
        QVERIFY(orders.create(oneUnitOrder(orderNo)).ok());

        QProcess a, b;
        for (QProcess *p : {&a, &b}) {
            p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
            p->start(QCoreApplication::applicationFilePath(),
                     {QStringLiteral("--fence-writer"), m_db.server->url(), orderNo});
            QVERIFY2(p->waitForStarted(10000), "cannot start a fence writer process");
        }
        auto ask = [](QProcess &p, qint64 token) -> QString {
            p.write(QByteArray::number(token) + '\n');
            while (!p.canReadLine()) {
                if (!p.waitForReadyRead(30000))
                    return QStringLiteral("timeout");
            }
            return QString::fromUtf8(p.readLine()).trimmed();
        };

        // Phase 1: the interleaving a paused lock holder produces.
        QCOMPARE(ask(a, 10), QStringLiteral("ok"));    // A holds the lock with 10
        QCOMPARE(ask(b, 20), QStringLiteral("ok"));    // A's lease ran out; B got 20
        QCOMPARE(ask(a, 11), QStringLiteral("stale")); // A wakes up: refused
        QCOMPARE(ask(a, 10), QStringLiteral("stale"));
        QCOMPARE(ask(b, 21), QStringLiteral("ok"));
        QCOMPARE(ask(a, 30), QStringLiteral("ok")); // A's next lease
        QCOMPARE(ask(b, 25), QStringLiteral("stale"));
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT fence FROM orders WHERE order_no = ?"), {orderNo}),
                 qint64(30));

        // Phase 2: both stream writes at once, A even tokens and B odd ones.
        constexpr int perProcess = 200;
        QByteArray forA, forB;
        for (int i = 0; i < perProcess; ++i) {
            forA += QByteArray::number(1000 + 2 * i) + '\n';
            forB += QByteArray::number(1001 + 2 * i) + '\n';
        }
        a.write(forA);
        b.write(forB);
        int answers = 0, refused = 0;
        for (QProcess *p : {&a, &b}) {
            for (int i = 0; i < perProcess; ++i) {
                while (!p->canReadLine())
                    QVERIFY2(p->waitForReadyRead(60000), "a fence writer stopped answering");
                const QString answer = QString::fromUtf8(p->readLine()).trimmed();
                QVERIFY2(answer == u"ok" || answer == u"stale", qPrintable(answer));
                ++answers;
                refused += answer == u"stale";
            }
        }
        QCOMPARE(answers, 2 * perProcess);
        for (QProcess *p : {&a, &b}) {
            p->closeWriteChannel();
            QVERIFY(p->waitForFinished(30000));
            QCOMPARE(p->exitCode(), 0);
        }

        const qint64 newest = 1001 + 2 * (perProcess - 1);
        QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT fence FROM orders WHERE order_no = ?"), {orderNo}),
                 newest);
        auto accepted = m_db.database->read([&](sql::Session &s) -> core::Result<QList<qint64>> {
            auto q = s.exec(QStringLiteral("SELECT after_state FROM audit_log WHERE action = 'test.fenced_write' "
                                           "AND target = ? ORDER BY id"),
                            {QVariant(QStringLiteral("order:") + orderNo)});
            if (!q)
                return q.error();
            QList<qint64> tokens;
            while (q.value().next())
                tokens.append(q.value().value(0).toLongLong());
            return tokens;
        });
        QVERIFY(accepted.ok());
        const QList<qint64> &tokens = accepted.value();
        QCOMPARE(tokens.size(), 4 + (answers - refused));
        for (qsizetype i = 1; i < tokens.size(); ++i)
            QVERIFY2(tokens[i] > tokens[i - 1],
                     qPrintable(QStringLiteral("accepted %1 after %2").arg(tokens[i]).arg(tokens[i - 1])));
        qInfo("phase 2: %d writes, %d refused as stale", answers, refused);
    }

private:
    MigratedDatabase m_db;
};

namespace {

// The child side of fencingAcrossTwoProcesses: one token per stdin line, answers "ok" or
// "stale" per line. Its own process, its own connection.
int runFenceWriter(const QString &url, const QString &orderNo)
{
    auto parsed = config::DatabaseUrl::parse(url);
    if (!parsed)
        return 2;
    sql::Database database(sql::DatabaseOptions{parsed.value(), 5000, 8});
    sql::SqlOrders orders(database);
    sql::SqlAuditWriter audit(database);
    QTextStream in(stdin), out(stdout);
    QString line;
    while (in.readLineInto(&line)) {
        const qint64 token = line.toLongLong();
        auto outcome = database.write([&](sql::Session &s) -> core::Result<TransitionOutcome> {
            auto written = orders.recordFence(s, orderNo, token);
            if (!written || written.value() != TransitionOutcome::Transitioned)
                return written;
            // Same transaction: the log row exists only if the fenced write committed.
            auto logged = audit.append({QStringLiteral("test"),
                                        QStringLiteral("test.fenced_write"),
                                        QStringLiteral("order:") + orderNo,
                                        {},
                                        QString::number(token),
                                        QStringLiteral("fencing test"),
                                        {}});
            if (!logged)
                return logged.error();
            return written;
        });
        if (!outcome)
            out << "error " << outcome.error().internalMessage << '\n';
        else
            out << (outcome.value() == TransitionOutcome::Transitioned ? "ok" : "stale") << '\n';
        out.flush();
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc == 4 && qstrcmp(argv[1], "--fence-writer") == 0)
        return runFenceWriter(QString::fromLocal8Bit(argv[2]), QString::fromLocal8Bit(argv[3]));
    TestStorageConcurrency test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_storageconcurrency.moc"
