#include "failoverstorm.h"

#include "paidonceinvariants.h"

#include <QElapsedTimer>
#include <QStringList>

namespace payonce::testsupport {

bool pollUntil(const std::function<bool()> &done, int timeoutMs)
{
    QElapsedTimer waited;
    waited.start();
    while (!done()) {
        if (waited.elapsed() > timeoutMs)
            return false;
        QTest::qWait(10);
    }
    return true;
}

std::unique_ptr<AgentCluster> startStormCluster(AgentCluster::Redis redis, int agents, QString *error)
{
    QElapsedTimer started;
    started.start();
    auto cluster = AgentCluster::start(Dialect::PostgreSql, agents, error, redis);
    if (!cluster)
        return nullptr;
    qInfo("%d agents, payonce-sim, PostgreSQL and %s up in %lld ms", agents,
          redis == AgentCluster::Redis::Cluster ? "a Redis Cluster of 3 masters and 3 replicas"
                                                : "a Redis master, its replica and 3 Sentinels",
          started.elapsed());
    // Every change of an order's fence, as the database saw it, in commit order per row.
    if (const QString recorded = recordFenceHistory(cluster->database()); !recorded.isEmpty()) {
        *error = recorded;
        return nullptr;
    }
    return cluster;
}

bool waitForProgress(const CallbackStorm &storm, double share)
{
    const qint64 posts = qint64(double(storm.firstRoundPosts()) * share);
    return pollUntil([&] { return storm.postsAnswered() >= posts; }, 180000);
}

QString recordFenceHistory(sql::Database &database)
{
    for (const char *statement :
         {"CREATE TABLE test_fence_history (id BIGSERIAL PRIMARY KEY, order_no VARCHAR(64) NOT NULL, "
          "old_fence BIGINT NOT NULL, new_fence BIGINT NOT NULL)",
          "CREATE FUNCTION test_fence_history() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
          "IF NEW.fence <> OLD.fence THEN INSERT INTO test_fence_history (order_no, old_fence, new_fence) "
          "VALUES (NEW.order_no, OLD.fence, NEW.fence); END IF; RETURN NEW; END $$",
          "CREATE TRIGGER test_fence_history AFTER UPDATE OF fence ON orders FOR EACH ROW "
          "EXECUTE FUNCTION test_fence_history()"}) {
        auto done = execSql(database, QString::fromLatin1(statement));
        if (!done.ok())
            return done.error().internalMessage;
    }
    return {};
}

FenceHistory readFenceHistory(sql::Database &database, const QString &prefix)
{
    const QVariantList like{QVariant(prefix + u'%')};
    FenceHistory history;
    history.changes = countRows(database,
                                QStringLiteral("SELECT COUNT(*) FROM test_fence_history WHERE order_no LIKE ?"), like);
    history.backwards = firstValueText(
        database,
        QStringLiteral("SELECT string_agg(order_no || ' ' || old_fence || ' -> ' || new_fence, '; ') "
                       "FROM test_fence_history WHERE order_no LIKE ? AND new_fence < old_fence"),
        like);
    return history;
}

QString effectsWithAnotherToken(sql::Database &database, const QString &prefix)
{
    QStringList found;
    for (const char *table : {"stock_log", "user_coupon", "point_log"}) {
        const qint64 rows = countRows(
            database,
            QStringLiteral("SELECT COUNT(*) FROM %1 e JOIN orders o ON o.order_no = e.order_no "
                           "WHERE o.order_no LIKE ? AND e.fence <> 0 AND e.fence <> o.fence")
                .arg(QLatin1String(table)),
            {QVariant(prefix + u'%')});
        if (rows != 0)
            found << QStringLiteral("%1: %2").arg(QLatin1String(table)).arg(rows);
    }
    return found.join(QStringLiteral(", "));
}

qint64 countWithPrefix(sql::Database &database, const char *sql, const QString &prefix)
{
    const QVariantList binds = prefix.isEmpty() ? QVariantList{} : QVariantList{QVariant(prefix + u'%')};
    return countRows(database, QString::fromLatin1(sql), binds);
}

namespace {

void verifyStormPaidOnce(AgentCluster &cluster, const QString &prefix, int orders, qint64 deliveries, int settleMs)
{
    QVERIFY2(pollUntil([&] { return checkPaidOnce(cluster.database(), prefix, orders).settled(); }, settleMs),
             "the storm's orders did not settle");
    const PaidOnceReport report = checkPaidOnce(cluster.database(), prefix, orders);
    qInfo("%s", qPrintable(report.describe()));
    QVERIFY2(report.holds(), qPrintable(report.describe()));
    QCOMPARE(report.deliveries, deliveries);
    QCOMPARE(cluster.stockLeft(prefix), qint64(10));
}

void verifyFencesOnlyRose(sql::Database &database, const QString &prefix, int orders, FenceHistory *history)
{
    *history = readFenceHistory(database, prefix);
    QVERIFY2(history->backwards.isEmpty(), qPrintable(QStringLiteral("fences that went down: ") + history->backwards));
    QVERIFY2(history->changes >= orders,
             qPrintable(QStringLiteral("only %1 fence changes recorded").arg(history->changes)));
    const QString otherTokens = effectsWithAnotherToken(database, prefix);
    QVERIFY2(otherTokens.isEmpty(), qPrintable(QStringLiteral("effects with another token: ") + otherTokens));
}

} // namespace

void verifyStormOutcome(AgentCluster &cluster, const QString &prefix, int orders, qint64 deliveries, int settleMs,
                        FenceHistory *history)
{
    verifyStormPaidOnce(cluster, prefix, orders, deliveries, settleMs);
    if (!QTest::currentTestFailed())
        verifyFencesOnlyRose(cluster.database(), prefix, orders, history);
}

} // namespace payonce::testsupport
