#include "storagefixture.h"

#include "sql/migrationrunner.h"

#include <QDebug>

#include <latch>
#include <thread>
#include <vector>

namespace payonce::testsupport {

MigratedDatabase MigratedDatabase::start(Dialect dialect, QString *error)
{
    MigratedDatabase result;
    // Every failure names the dialect: the same suite runs against all three.
    const QString prefix = QStringLiteral("cannot get a migrated %1 database: ").arg(dialectName(dialect));
    auto server = TestDatabase::start(dialect, error);
    if (!server) {
        error->prepend(prefix);
        return result;
    }
    auto url = config::DatabaseUrl::parse(server->url());
    if (!url) {
        *error = prefix + url.error().internalMessage;
        return result;
    }
    auto database = std::make_unique<sql::Database>(sql::DatabaseOptions{url.value(), 5000, 8});
    if (auto connected = database->connect(); !connected) {
        *error = prefix + connected.error().internalMessage;
        return result;
    }
    sql::MigrationRunner runner(*database);
    if (auto migrated = runner.migrate(); !migrated) {
        *error = prefix + migrated.error().internalMessage;
        return result;
    }
    result.server = std::move(server);
    result.database = std::move(database);
    return result;
}

bool MigratedDatabase::start(Dialect dialect)
{
    QString error;
    *this = start(dialect, &error);
    m_error = error.toLocal8Bit();
    return bool(*this);
}

void RaceTally::error(const core::Error &e)
{
    errors.fetch_add(1);
    std::lock_guard guard(mutex);
    if (firstError.isEmpty())
        firstError = e.internalMessage;
}

void RaceTally::count(const core::Result<bool> &mine)
{
    if (!mine.ok())
        error(mine.error());
    else
        (mine.value() ? won : lost).fetch_add(1);
}

sql::NewOrder oneUnitOrder(const QString &orderNo, qint64 userId)
{
    sql::NewOrder order;
    order.orderNo = orderNo;
    order.userId = userId;
    order.amountFen = 9900;
    order.items = {{QStringLiteral("SKU1"), 1}};
    return order;
}

sql::NewOrder rewardedOrder(const QString &orderNo, qint64 userId, qint64 amountFen, const QString &skuId,
                            qint64 quantity)
{
    sql::NewOrder order;
    order.orderNo = orderNo;
    order.userId = userId;
    order.amountFen = amountFen;
    order.rewardCouponTemplate = QStringLiteral("WELCOME10");
    order.rewardPoints = 100;
    order.items = {{skuId, quantity}};
    return order;
}

bool createOrder(sql::Database &database, const sql::NewOrder &order)
{
    auto created = sql::SqlOrders(database).create(order);
    if (!created.ok())
        qWarning() << "order not made:" << created.error().internalMessage;
    return created.ok();
}

qint64 countRowsOrWarn(sql::Database &database, const QString &sql, const QVariantList &binds)
{
    QString error;
    const qint64 n = countRows(database, sql, binds, &error);
    if (n < 0)
        qWarning().noquote() << "count failed:" << sql << error;
    return n;
}

SqliteFenceEpochs::SqliteFenceEpochs() : m_db(MigratedDatabase::start(Dialect::Sqlite, &m_error))
{
    if (m_db)
        m_source = std::make_unique<sql::SqlFenceEpochSource>(*m_db.database);
}

core::Result<quint32> SqliteFenceEpochs::newEpoch(const QString &keyStoreInstanceId, const QString &reason)
{
    if (!m_source)
        return unmade();
    return m_source->newEpoch(keyStoreInstanceId, reason);
}

core::Result<quint32> SqliteFenceEpochs::largestEpoch()
{
    if (!m_source)
        return unmade();
    return m_source->largestEpoch();
}

core::Error SqliteFenceEpochs::unmade() const
{
    return core::Error::make(core::ErrorCode::Unavailable,
                             QStringLiteral("the fence-epoch database could not be made: ") + m_error);
}

void runConcurrently(int threads, const std::function<void(int)> &body)
{
    std::latch start(threads);
    std::vector<std::thread> workers;
    workers.reserve(threads);
    for (int i = 0; i < threads; ++i) {
        workers.emplace_back([&, i] {
            start.arrive_and_wait();
            body(i);
        });
    }
    for (auto &worker : workers)
        worker.join();
}

qint64 countRows(sql::Database &database, const QString &sql, const QVariantList &binds, QString *error)
{
    auto counted = database.read([&](sql::Session &session) -> core::Result<qint64> {
        auto query = session.exec(sql, binds);
        if (!query)
            return query.error();
        if (!query.value().next())
            return qint64(-1);
        return query.value().value(0).toLongLong();
    });
    if (!counted) {
        if (error)
            *error = counted.error().internalMessage;
        return -1;
    }
    return counted.value();
}

QString firstValueText(sql::Database &database, const QString &sql, const QVariantList &binds)
{
    auto read = database.read([&](sql::Session &session) -> core::Result<QString> {
        auto q = session.exec(sql, binds);
        if (!q)
            return q.error();
        return q.value().next() ? q.value().value(0).toString() : QString();
    });
    return read.ok() ? read.value() : QStringLiteral("<error: %1>").arg(read.error().internalMessage);
}

core::Result<void> execSql(sql::Database &database, const QString &sql, const QVariantList &binds)
{
    return database.write([&](sql::Session &session) -> core::Result<void> {
        auto query = session.exec(sql, binds, QStringLiteral("test set-up"));
        if (!query)
            return query.error();
        return {};
    });
}

} // namespace payonce::testsupport
