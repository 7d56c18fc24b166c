// Retention on each dialect, against the real SqlRetentionStore and RetentionPruner: rows
// past their table's days are deleted in batches, oldest first, and what must stay stays
// whatever its age — an `accepted` callback row and the delivery it is settled from, a
// pending or dead outbox event, a running QA run, the audit log. Rows younger than the
// cutoff are never touched. A run limited to two batches per table leaves the rest to the
// next run and says so.

#include "storagefixture.h"

#include "core/retention/retentionpruner.h"
#include "sql/sqlretentionstore.h"

#include <QDateTime>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTest>

using namespace payonce;
using namespace payonce::core;
using namespace payonce::testsupport;

namespace {

constexpr qint64 kDayMs = 24LL * 3600 * 1000;
constexpr int kDays = 5;
constexpr int kOldDeliveries = 7; // prunable ones, beyond those kept for their accepted row

} // namespace

class TestRetention : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_db.start(), m_db.error());
        m_now = QDateTime::currentMSecsSinceEpoch();
        m_old = m_now - (kDays + 5) * kDayMs;
        m_young = m_now - (kDays - 1) * kDayMs;
    }

    void whatOutlivedItsDaysGoesWhatMustStayStays()
    {
        // Deliveries: old ones of no accepted row (some of processed rows), one of an
        // accepted row, a young one.
        QList<qint64> oldDeliveries;
        for (int i = 0; i < kOldDeliveries; ++i)
            oldDeliveries << delivery(QStringLiteral("4200OLD%1").arg(i), m_old + i);
        const qint64 acceptedDelivery = delivery(QStringLiteral("4200ACCEPTED"), m_old);
        const qint64 youngDelivery = delivery(QStringLiteral("4200YOUNG"), m_young);
        // The callback log: old processed rows, an old accepted row, a young processed row.
        logRow(QStringLiteral("4200OLD0"), QStringLiteral("processed"), oldDeliveries[0], m_old);
        logRow(QStringLiteral("4200OLD1"), QStringLiteral("processed"), oldDeliveries[1], m_old);
        logRow(QStringLiteral("4200ACCEPTED"), QStringLiteral("accepted"), acceptedDelivery, m_old);
        logRow(QStringLiteral("4200YOUNG"), QStringLiteral("processed"), youngDelivery, m_young);
        // The outbox: old delivered, old pending and dead, young delivered.
        event(QStringLiteral("old-delivered"), QStringLiteral("delivered"), m_old);
        event(QStringLiteral("old-pending"), QStringLiteral("pending"), m_old);
        event(QStringLiteral("old-dead"), QStringLiteral("dead"), m_old);
        event(QStringLiteral("young-delivered"), QStringLiteral("delivered"), m_young);
        // QA runs: old passed and abandoned, old still running, young passed.
        qaRun(QStringLiteral("qa-old-passed"), QStringLiteral("passed"), m_old);
        qaRun(QStringLiteral("qa-old-abandoned"), QStringLiteral("abandoned"), m_old);
        qaRun(QStringLiteral("qa-old-running"), QStringLiteral("running"), m_old);
        qaRun(QStringLiteral("qa-young-passed"), QStringLiteral("passed"), m_young);
        exec(QStringLiteral("INSERT INTO audit_log (at, actor, action, target, reason) VALUES (?, 'desk', 'mode.set', "
                            "'mode:callbacks', 'INC-1')"),
             {m_old});
        const qint64 audit = count(QStringLiteral("SELECT COUNT(*) FROM audit_log"));

        sql::SqlRetentionStore store(*m_db.database);
        RetentionOptions options;
        options.days.fill(kDays);
        options.batchSize = 2;
        options.maxBatchesPerRun = 2;
        RetentionPruner pruner(store, options);

        // First run: two batches of two deliveries, the rest for later.
        const RetentionPruner::Report first = pruner.runOnce(m_now);
        QVERIFY(!first.skipped);
        QVERIFY(!first.complete);
        QCOMPARE(first.deleted[std::size_t(RetainedTable::Deliveries)], qint64(4));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE id IN (?, ?, ?, ?)"),
                       {oldDeliveries[0], oldDeliveries[1], oldDeliveries[2], oldDeliveries[3]}),
                 qint64(0)); // oldest first
        const RetentionPruner::Report second = pruner.runOnce(m_now);
        QVERIFY(second.complete);
        QCOMPARE(second.deleted[std::size_t(RetainedTable::Deliveries)], qint64(kOldDeliveries - 4));

        QCOMPARE(pruner.deleted(RetainedTable::Deliveries), qint64(kOldDeliveries));
        QCOMPARE(pruner.deleted(RetainedTable::CallbackLog), qint64(2));
        QCOMPARE(pruner.deleted(RetainedTable::OutboxDelivered), qint64(1));
        QCOMPARE(pruner.deleted(RetainedTable::QaRuns), qint64(2));

        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries")), qint64(2));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE id IN (?, ?)"),
                       {acceptedDelivery, youngDelivery}),
                 qint64(2));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log")), qint64(2));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no IN ('4200ACCEPTED', "
                                      "'4200YOUNG')")),
                 qint64(2));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_id IN ('old-pending', 'old-dead', "
                                      "'young-delivered')")),
                 qint64(3));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM outbox")), qint64(3));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM qa_runs WHERE scenario_id IN ('qa-old-running', "
                                      "'qa-young-passed')")),
                 qint64(2));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM qa_runs")), qint64(2));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM audit_log")), audit);

        // Nothing left to do: a third run deletes nothing.
        const RetentionPruner::Report third = pruner.runOnce(m_now);
        QVERIFY(third.complete);
        for (RetainedTable table : allRetainedTables)
            QCOMPARE(third.deleted[std::size_t(table)], qint64(0));
    }

    // 0 days: the table is kept for ever, whatever else is pruned.
    void zeroDaysKeepsForEver()
    {
        delivery(QStringLiteral("4200FOREVER"), m_old);
        sql::SqlRetentionStore store(*m_db.database);
        RetentionOptions options;
        options.days.fill(kDays);
        options.days[std::size_t(RetainedTable::Deliveries)] = 0;
        RetentionPruner pruner(store, options);
        QVERIFY(pruner.runOnce(m_now).complete);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no = '4200FOREVER'")),
                 qint64(1));
    }

    // A batch walks its table's time index: it finds the old rows without reading the young
    // ones. Ordered by id, SQLite's planner walked the whole table in id order under the
    // write lock on every run (a memory storm's RSS stepped at each run), and the outbox's
    // delivered events had no index on delivered_at (a sequential scan on every dialect).
    // Checked on each dialect's own plan, with young rows and fresh statistics, as a busy
    // table has.
    void aBatchWalksItsTableTimeIndex_data()
    {
        QTest::addColumn<int>("table");
        QTest::addColumn<QString>("index");
        QTest::newRow("deliveries") << int(RetainedTable::Deliveries) << QStringLiteral("callback_deliveries_received");
        QTest::newRow("callback_log") << int(RetainedTable::CallbackLog) << QStringLiteral("pay_callback_log_status");
        QTest::newRow("outbox_delivered") << int(RetainedTable::OutboxDelivered) << QStringLiteral("outbox_delivered");
    }
    void aBatchWalksItsTableTimeIndex()
    {
        QFETCH(int, table);
        QFETCH(QString, index);
        if (count(QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE pay_no LIKE '4200PLAN%'")) == 0) {
            for (int i = 0; i < 3000; ++i) {
                const qint64 id = delivery(QStringLiteral("4200PLAN%1").arg(i), m_young + i);
                logRow(QStringLiteral("4200PLAN%1").arg(i), QStringLiteral("processed"), id, m_young + i);
                event(QStringLiteral("plan-%1").arg(i), QStringLiteral("delivered"), m_young + i);
            }
            analyse();
        }
        const sql::Dialect dialect = m_db.database->dialect();
        const QString statement = sql::SqlRetentionStore::batchStatement(dialect, RetainedTable(table), 1000)
                                      .replace(QLatin1Char('?'), QString::number(m_now - kDays * kDayMs));
        const QString plan = explain(dialect, statement);
        QVERIFY2(plan.contains(index), qPrintable(statement + QStringLiteral("\n") + plan));
    }

private:
    /// The plan of `statement` as the dialect prints it, one line a row.
    QString explain(sql::Dialect dialect, const QString &statement)
    {
        const QString explained = dialect == sql::Dialect::Sqlite ? QStringLiteral("EXPLAIN QUERY PLAN ") + statement
                                                                  : QStringLiteral("EXPLAIN ") + statement;
        QStringList lines;
        auto read = m_db.database->read([&](sql::Session &session) -> Result<void> {
            auto query = session.exec(explained, {}, QStringLiteral("explain"));
            if (!query.ok())
                return query.error();
            QSqlQuery rows = std::move(query).value();
            while (rows.next()) {
                QStringList cells;
                for (int c = 0; c < rows.record().count(); ++c)
                    cells << rows.value(c).toString();
                lines << cells.join(QLatin1Char(' '));
            }
            return {};
        });
        if (!read.ok())
            return QStringLiteral("EXPLAIN failed: ") + read.error().internalMessage;
        return lines.join(QLatin1Char('\n'));
    }
    void analyse()
    {
        for (const char *table : {"callback_deliveries", "pay_callback_log", "outbox"}) {
            const sql::Dialect dialect = m_db.database->dialect();
            const QString statement = dialect == sql::Dialect::MariaDb ? QStringLiteral("ANALYZE TABLE %1")
                                                                       : QStringLiteral("ANALYZE %1");
            auto done = m_db.database->read([&](sql::Session &session) -> Result<void> {
                auto ran = session.exec(statement.arg(QLatin1String(table)), {}, QStringLiteral("analyse"));
                return ran.ok() ? Result<void>{} : Result<void>(ran.error());
            });
            QVERIFY2(done.ok(), done.ok() ? "" : qPrintable(done.error().internalMessage));
        }
    }

    qint64 count(const QString &sql, const QVariantList &binds = {}) { return countRows(*m_db.database, sql, binds); }
    void exec(const QString &sql, const QVariantList &binds)
    {
        auto done = execSql(*m_db.database, sql, binds);
        QVERIFY2(done.ok(), done.ok() ? "" : qPrintable(done.error().internalMessage));
    }

    qint64 delivery(const QString &payNo, qint64 receivedAt)
    {
        exec(QStringLiteral("INSERT INTO callback_deliveries (channel, pay_no, order_no, received_at, verified, layer, "
                            "http_status, raw_body) VALUES ('wechat', ?, 'ORD-RETAINED', ?, 1, 'none', 200, '{}')"),
             {payNo, receivedAt});
        return count(QStringLiteral("SELECT MAX(id) FROM callback_deliveries WHERE pay_no = ?"), {payNo});
    }
    void logRow(const QString &payNo, const QString &status, qint64 deliveryId, qint64 createdAt)
    {
        exec(QStringLiteral("INSERT INTO pay_callback_log (channel, pay_no, order_no, amount_fen, status, delivery_id, "
                            "created_at) VALUES ('wechat', ?, 'ORD-RETAINED', 100, ?, ?, ?)"),
             {payNo, status, deliveryId, createdAt});
    }
    void event(const QString &id, const QString &status, qint64 at)
    {
        exec(QStringLiteral("INSERT INTO outbox (event_id, event_type, aggregate_id, payload, status, next_attempt_at, "
                            "created_at, delivered_at) VALUES (?, 'order.paid', 'ORD-RETAINED', '{}', ?, ?, ?, ?)"),
             {id, status, at, at, status == u"delivered" ? QVariant(at) : QVariant(QMetaType(QMetaType::LongLong))});
    }
    void qaRun(const QString &id, const QString &status, qint64 at)
    {
        exec(QStringLiteral(
                 "INSERT INTO qa_runs (scenario_id, kind, params, status, started_by, started_at, finished_at) "
                 "VALUES (?, 'retry_storm', '{}', ?, 'qa', ?, ?)"),
             {id, status, at, status == u"running" ? QVariant(QMetaType(QMetaType::LongLong)) : QVariant(at)});
    }

    MigratedDatabase m_db;
    qint64 m_now = 0;
    qint64 m_old = 0;
    qint64 m_young = 0;
};

QTEST_GUILESS_MAIN(TestRetention)
#include "tst_retention.moc"
