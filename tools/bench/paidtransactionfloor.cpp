#include "paidtransactionfloor.h"

#include "benchsqlorders.h"

#include "config/databaseurl.h"
#include "sql/database.h"
#include "sql/sqlorderrepository.h"
#include "sql/sqlpaymentstore.h"

#include <QDateTime>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>

#include <atomic>
#include <memory>

namespace payonce::bench {

namespace {

using core::Result;
using Dialect = config::DatabaseUrl::Dialect;

/// One thread's connection with the paid transaction's statements prepared once.
class FloorConnection {
public:
    FloorConnection(const config::DatabaseUrl &url, const QString &name) : m_url(url), m_name(name) {}
    ~FloorConnection()
    {
        m_statements.clear();
        m_db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_name);
    }
    FloorConnection(const FloorConnection &) = delete;
    FloorConnection &operator=(const FloorConnection &) = delete;

    Result<void> open()
    {
        static const char *drivers[] = {"QSQLITE", "QPSQL", "QMYSQL"};
        m_db = QSqlDatabase::addDatabase(QString::fromLatin1(drivers[int(m_url.dialect)]), m_name);
        if (m_url.dialect == Dialect::Sqlite) {
            m_db.setDatabaseName(m_url.sqlitePath);
        } else {
            m_db.setHostName(m_url.host);
            m_db.setPort(m_url.port);
            m_db.setUserName(m_url.user);
            m_db.setPassword(m_url.password);
            m_db.setDatabaseName(m_url.database);
        }
        if (!m_db.open())
            return failure(QStringLiteral("open"), m_db.lastError());
        // The agent's own durability and isolation, so the floor commits what it commits.
        QStringList setup;
        if (m_url.dialect == Dialect::Sqlite)
            setup = {QStringLiteral("PRAGMA journal_mode=WAL"), QStringLiteral("PRAGMA synchronous=FULL"),
                     QStringLiteral("PRAGMA busy_timeout=30000")};
        else if (m_url.dialect == Dialect::MariaDb)
            setup = {QStringLiteral("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")};
        else
            setup = {QStringLiteral("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED")};
        for (const QString &statement : setup) {
            QSqlQuery q(m_db);
            if (!q.exec(statement))
                return failure(statement, q.lastError());
        }
        const QStringList texts{
            QStringLiteral(
                "INSERT INTO pay_callback_log (channel, pay_no, order_no, amount_fen, status, outcome, "
                "created_at, processed_at, payment_no) VALUES ('wechat', ?, ?, ?, 'processed', 'processed', ?, ?, ?)"),
            QStringLiteral(
                "UPDATE orders SET status = 'PAID', pay_no = ?, paid_channel = 'wechat', paid_at = ?, "
                "updated_at = ?, version = version + 1 WHERE order_no = ? AND status IN ('PENDING','PAYING')"),
            QStringLiteral("UPDATE payment_records SET status = 'paid', updated_at = ? WHERE payment_no = ?"),
            QStringLiteral(
                "INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, created_at, updated_at) "
                "VALUES (?, ?, 'WELCOME10', 'active', 0, ?, ?)"),
            QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
                           "VALUES (?, ?, 'reward', 100, 0, ?)"),
            QStringLiteral("INSERT INTO outbox (event_id, event_type, aggregate_id, payload, status, attempts, "
                           "next_attempt_at, created_at) VALUES (?, 'order.paid', ?, ?, 'pending', 0, ?, ?)"),
            QStringLiteral("INSERT INTO stock_log (order_no, sku_id, entry_key, reason, qty, fence, created_at) "
                           "VALUES (?, ?, 'take', 'paid', 1, 0, ?)"),
            QStringLiteral("UPDATE skus SET stock = stock - 1, updated_at = ? WHERE sku_id = ? AND stock >= 1"),
        };
        for (const QString &text : texts) {
            auto query = std::make_unique<QSqlQuery>(m_db);
            if (!query->prepare(text))
                return failure(QStringLiteral("prepare ") + text.left(40), query->lastError());
            m_statements.push_back(std::move(query));
        }
        return {};
    }

    /// One order paid in one transaction; a busy database rolls back and runs it again.
    Result<void> pay(const BenchSqlOrder &order, const QString &payNo)
    {
        for (int attempt = 0;; ++attempt) {
            auto done = payOnce(order, payNo);
            if (done.ok() || !m_busy || attempt >= 8)
                return done;
        }
    }

private:
    const config::DatabaseUrl m_url;
    const QString m_name;
    QSqlDatabase m_db;
    std::vector<std::unique_ptr<QSqlQuery>> m_statements;
    bool m_busy = false;

    Result<void> failure(const QString &what, const QSqlError &error)
    {
        const QString code = error.nativeErrorCode();
        // SQLITE_BUSY (5), PostgreSQL serialization/deadlock, MariaDB deadlock/lock wait.
        m_busy = code == u"5" || code == u"40001" || code == u"40P01" || code == u"1213" || code == u"1205";
        return core::Error::make(core::ErrorCode::Internal, what + QStringLiteral(": ") + error.text());
    }

    Result<void> step(int index, const QVariantList &binds, bool mustChangeOne = false)
    {
        QSqlQuery &q = *m_statements[std::size_t(index)];
        for (qsizetype i = 0; i < binds.size(); ++i)
            q.bindValue(int(i), binds[i]);
        if (!q.exec())
            return failure(QStringLiteral("statement %1").arg(index), q.lastError());
        if (mustChangeOne && q.numRowsAffected() != 1)
            return core::Error::make(
                core::ErrorCode::Internal,
                QStringLiteral("statement %1 changed %2 rows").arg(index).arg(q.numRowsAffected()));
        return {};
    }

    Result<void> rollback(Result<void> why)
    {
        m_db.rollback();
        return why;
    }

    Result<void> payOnce(const BenchSqlOrder &order, const QString &payNo)
    {
        m_busy = false;
        if (m_url.dialect == Dialect::Sqlite) {
            // BEGIN IMMEDIATE, as the agent's writes: the one writer lock taken up front.
            QSqlQuery begin(m_db);
            if (!begin.exec(QStringLiteral("BEGIN IMMEDIATE")))
                return failure(QStringLiteral("BEGIN IMMEDIATE"), begin.lastError());
        } else if (!m_db.transaction()) {
            return failure(QStringLiteral("BEGIN"), m_db.lastError());
        }
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const QString payload = QStringLiteral(R"({"order_no":"%1","pay_no":"%2","channel":"wechat","amount_fen":%3})")
                                    .arg(order.orderNo, payNo)
                                    .arg(order.amountFen);
        const QList<std::pair<int, QVariantList>> steps{
            {0, {payNo, order.orderNo, order.amountFen, now, now, order.paymentNo}},
            {1, {payNo, now, now, order.orderNo}},
            {2, {now, order.paymentNo}},
            {3, {order.orderNo, order.userId, now, now}},
            {4, {order.orderNo, order.userId, now}},
            {5, {QString(QStringLiteral("order.paid:") + order.orderNo), order.orderNo, payload, now, now}},
            {6, {order.orderNo, order.skuId, now}},
            {7, {now, order.skuId}},
        };
        for (const auto &[index, binds] : steps) {
            // The CAS and the stock must each change their one row, or the order is not paid.
            if (auto done = step(index, binds, index == 1 || index == 7); !done.ok())
                return rollback(done);
        }
        if (!m_db.commit())
            return rollback(failure(QStringLiteral("COMMIT"), m_db.lastError()));
        return {};
    }
};

} // namespace

LoadResult runPaidTransactionFloor(const PaidFloorOptions &options)
{
    auto url = config::DatabaseUrl::parse(options.databaseUrl);
    if (!url.ok()) {
        LoadResult failed;
        failed.failureSamples << url.error().internalMessage;
        return failed;
    }
    std::vector<BenchSqlOrder> orders;
    {
        sql::Database database(sql::DatabaseOptions{*url});
        auto prepared = prepareBenchSqlOrders(database, options.prefix, options.count, options.skus, options.threads);
        if (!prepared.ok()) {
            LoadResult failed;
            failed.failed = 1;
            failed.failureSamples << QStringLiteral("preparing the floor's orders: ")
                                         + prepared.error().internalMessage;
            return failed;
        }
        orders = std::move(prepared).value();
    }
    std::atomic<int> connectionSerial{0};
    return onThreadsWithState(
        options.threads, options.count,
        [&]() -> std::unique_ptr<FloorConnection> {
            auto connection = std::make_unique<FloorConnection>(
                *url, QStringLiteral("payonce-bench-floor-%1").arg(connectionSerial.fetch_add(1)));
            if (auto opened = connection->open(); !opened.ok()) {
                qWarning("payonce-bench: floor connection: %s", qPrintable(opened.error().internalMessage));
                return nullptr;
            }
            return connection;
        },
        [&](FloorConnection *connection, qint64 i) -> Result<void> {
            if (!connection)
                return core::Error::make(core::ErrorCode::Unavailable, QStringLiteral("no connection"));
            return connection->pay(orders[std::size_t(i)], options.prefix + QStringLiteral("-F") + QString::number(i));
        });
}

} // namespace payonce::bench
