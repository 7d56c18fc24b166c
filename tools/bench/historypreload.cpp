#include "historypreload.h"

#include "config/databaseurl.h"
#include "sql/database.h"

#include <QElapsedTimer>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>
#include <cstdio>
#include <functional>

namespace payonce::bench {

namespace {

using core::Result;
using Dialect = config::DatabaseUrl::Dialect;

/// Rows per transaction: large enough that the load is set-based, small enough that no
/// transaction holds gigabytes of undo or WAL at once.
constexpr qint64 kPreloadChunk = 250000;
constexpr qint64 kDayMs = 24LL * 3600 * 1000;

/// A real WeChat Pay v3 notification's size as the agent keeps it: the JSON body with its
/// base64 ciphertext (~800 bytes) and the Wechatpay-* headers (~450 bytes).
QString sizedText(char fill, int length)
{
    return QString(length, QLatin1Char(fill));
}

/// SELECT … FROM rows numbered n = first + offset … last + offset (first, last >= 1), in the
/// dialect's set-based way.
class RowNumbers {
public:
    RowNumbers(Dialect dialect, qint64 first, qint64 last, qint64 offset)
        : m_dialect(dialect), m_first(first), m_last(last), m_offset(offset)
    {
    }

    /// "INSERT INTO table (columns) SELECT expressions FROM the numbers".
    QString insertSelect(const QString &table, const QString &columns, const QString &expressions) const
    {
        const QString insert = QStringLiteral("INSERT INTO %1 (%2) SELECT %3 ").arg(table, columns, expressions);
        switch (m_dialect) {
        case Dialect::PostgreSql:
            return insert
                   + QStringLiteral(
                         "FROM (SELECT m + (%3) AS n FROM generate_series(%1::bigint, %2::bigint) AS s(m)) g")
                         .arg(m_first)
                         .arg(m_last)
                         .arg(m_offset);
        case Dialect::MariaDb:
            // The sequence engine's seq is unsigned: signed, so that arithmetic may go below zero.
            return insert
                   + QStringLiteral("FROM (SELECT CAST(seq AS SIGNED) + (%3) AS n FROM seq_%1_to_%2) g")
                         .arg(m_first)
                         .arg(m_last)
                         .arg(m_offset);
        case Dialect::Sqlite:
            return QStringLiteral("WITH RECURSIVE g(n) AS (SELECT %1 UNION ALL SELECT n + 1 FROM g WHERE n < %2) ")
                       .arg(m_first + m_offset)
                       .arg(m_last + m_offset)
                   + insert + QStringLiteral("FROM g");
        }
        return {};
    }

private:
    Dialect m_dialect;
    qint64 m_first;
    qint64 m_last;
    qint64 m_offset;
};

/// `literal` followed by the decimal digits of `expression`, as text.
QString concat(Dialect dialect, const QString &literal, const QString &expression)
{
    const QString quoted = QLatin1Char('\'') + QString(literal).replace(QLatin1Char('\''), QStringLiteral("''"))
                           + QLatin1Char('\'');
    return dialect == Dialect::MariaDb ? QStringLiteral("CONCAT(%1, %2)").arg(quoted, expression)
                                       : QStringLiteral("(%1 || %2)").arg(quoted, expression);
}

/// The statements for rows [first, last] of one kind, in one transaction.
using ChunkStatements = std::function<QStringList(const RowNumbers &)>;

Result<void> insertInChunks(sql::Database &database, const char *what, qint64 total, qint64 idOffset,
                            const ChunkStatements &statements, const QVariantList &binds)
{
    QElapsedTimer timer;
    timer.start();
    for (qint64 first = 1; first <= total; first += kPreloadChunk) {
        const qint64 last = std::min(total, first + kPreloadChunk - 1);
        const RowNumbers numbers(database.dialect(), first, last, idOffset);
        auto done = database.write([&](sql::Session &session) -> Result<void> {
            for (const QString &statement : statements(numbers)) {
                // Only the statements that name a '?' take the binds.
                const QVariantList used = statement.contains(QLatin1Char('?')) ? binds : QVariantList{};
                if (auto ran = session.exec(statement, used, QStringLiteral("preload")); !ran.ok())
                    return ran.error();
            }
            return {};
        });
        if (!done.ok())
            return done.error();
        std::fprintf(stderr, "payonce-bench:   %s: %lld of %lld (%.0f s)\n", what, static_cast<long long>(last),
                     static_cast<long long>(total), double(timer.elapsed()) / 1000);
    }
    return {};
}

/// Fresh statistics for the tables the callback path reads, as autovacuum or InnoDB's
/// persistent statistics would have them in production (and so that neither starts
/// analysing in the middle of a measured phase).
Result<void> analyse(sql::Database &database)
{
    static const QStringList tables{
        QStringLiteral("orders"),           QStringLiteral("order_items"),         QStringLiteral("payment_records"),
        QStringLiteral("pay_callback_log"), QStringLiteral("callback_deliveries"), QStringLiteral("stock_log"),
        QStringLiteral("user_coupon"),      QStringLiteral("point_log"),           QStringLiteral("outbox")};
    return database.read([&](sql::Session &session) -> Result<void> {
        for (const QString &table : tables) {
            QString statement;
            switch (database.dialect()) {
            case Dialect::PostgreSql: statement = QStringLiteral("VACUUM (ANALYZE) %1").arg(table); break;
            case Dialect::MariaDb: statement = QStringLiteral("ANALYZE TABLE %1").arg(table); break;
            case Dialect::Sqlite: statement = QStringLiteral("ANALYZE %1").arg(table); break;
            }
            if (auto ran = session.exec(statement, {}, QStringLiteral("preload statistics")); !ran.ok())
                return ran.error();
        }
        return {};
    });
}

} // namespace

Result<PreloadedCounts> preloadHistory(const HistoryPreloadOptions &options)
{
    auto url = config::DatabaseUrl::parse(options.databaseUrl);
    if (!url.ok())
        return url.error();
    sql::Database database(sql::DatabaseOptions{*url});
    const Dialect dialect = database.dialect();
    const qint64 orders = std::max<qint64>(options.paidOrders, 1);
    const int days = std::max(options.days, 1);
    // Row n's time: one of the last `days` days, spread over an hour inside it.
    const QString at = QStringLiteral("(%1 - (n % %2) * %3 - (n % 3600000))").arg(options.nowMs).arg(days).arg(kDayMs);
    const QString orderNo = concat(dialect, options.prefix + QStringLiteral("-O"), QStringLiteral("n"));
    const QString payNo = concat(dialect, options.prefix + QStringLiteral("-T"), QStringLiteral("n"));
    const QString paymentNo = concat(dialect, options.prefix + QStringLiteral("-P"), QStringLiteral("n"));
    const QString userId = QStringLiteral("(900000000 + n)");
    const QString skuId = concat(dialect, options.prefix + QStringLiteral("-SKU"), QStringLiteral("(n % 1000)"));

    if (options.paidOrders > 0) {
        const QString payload = QStringLiteral(
            R"({"order_no":"preloaded","pay_no":"preloaded","amount_fen":100,"channel":"wechat","paid_at":0,"items":[{"sku_id":"preloaded","qty":1}]})");
        auto paid = insertInChunks(
            database, "paid orders", options.paidOrders, 0,
            [&](const RowNumbers &rows) {
                return QStringList{
                    rows.insertSelect(
                        QStringLiteral("orders"),
                        QStringLiteral(
                            "order_no, user_id, amount_fen, currency, status, version, fence, pay_no, paid_channel, "
                            "reward_coupon_template, reward_points, created_at, updated_at, paid_at"),
                        QStringLiteral("%1, %2, 100, 'CNY', 'PAID', 3, 1, %3, 'wechat', 'WELCOME10', 100, %4, %4, %4")
                            .arg(orderNo, userId, payNo, at)),
                    rows.insertSelect(QStringLiteral("order_items"), QStringLiteral("order_no, sku_id, qty"),
                                      QStringLiteral("%1, %2, 1").arg(orderNo, skuId)),
                    rows.insertSelect(
                        QStringLiteral("payment_records"),
                        QStringLiteral(
                            "payment_no, order_no, channel, status, attempt, amount_fen, created_at, updated_at"),
                        QStringLiteral("%1, %2, 'wechat', 'paid', 1, 100, %3, %3").arg(paymentNo, orderNo, at)),
                    rows.insertSelect(
                        QStringLiteral("pay_callback_log"),
                        QStringLiteral("channel, pay_no, order_no, amount_fen, status, outcome, created_at, "
                                       "processed_at, payment_no"),
                        QStringLiteral("'wechat', %1, %2, 100, 'processed', 'processed', %3, %3, %4")
                            .arg(payNo, orderNo, at, paymentNo)),
                    rows.insertSelect(QStringLiteral("stock_log"),
                                      QStringLiteral("order_no, sku_id, entry_key, reason, qty, fence, created_at"),
                                      QStringLiteral("%1, %2, 'take', 'paid', 1, 1, %3").arg(orderNo, skuId, at)),
                    rows.insertSelect(
                        QStringLiteral("user_coupon"),
                        QStringLiteral("order_no, user_id, template_id, status, fence, created_at, updated_at"),
                        QStringLiteral("%1, %2, 'WELCOME10', 'active', 1, %3, %3").arg(orderNo, userId, at)),
                    rows.insertSelect(QStringLiteral("point_log"),
                                      QStringLiteral("order_no, user_id, point_type, delta, fence, created_at"),
                                      QStringLiteral("%1, %2, 'reward', 100, 1, %3").arg(orderNo, userId, at)),
                    rows.insertSelect(
                        QStringLiteral("outbox"),
                        QStringLiteral("event_id, event_type, aggregate_id, payload, status, attempts, "
                                       "next_attempt_at, created_at, delivered_at"),
                        QStringLiteral("%1, 'order.paid', %2, ?, 'delivered', 1, %3, %3, %3")
                            .arg(concat(dialect, QStringLiteral("order.paid:") + options.prefix + QStringLiteral("-O"),
                                        QStringLiteral("n")),
                                 orderNo, at)),
                };
            },
            {payload});
        if (!paid.ok())
            return paid.error();
    }

    if (options.deliveries > 0) {
        // Delivery n belongs to order k = (n - 1) mod orders + 1: the first `orders` rows are
        // each order's first delivery (verified, kept whole), the rest its duplicates.
        const QString k = QStringLiteral("((n - 1) % %1 + 1)").arg(orders);
        const QString columns = QStringLiteral("channel, pay_no, order_no, received_at, verified, layer, http_status, "
                                               "error_code, headers, raw_body, agent_id, trace_id");
        const QString kPayNo = concat(dialect, options.prefix + QStringLiteral("-T"), k);
        const QString kOrderNo = concat(dialect, options.prefix + QStringLiteral("-O"), k);
        const qint64 firsts = std::min(options.deliveries, orders);
        auto first = insertInChunks(
            database, "first deliveries", firsts, 0,
            [&](const RowNumbers &rows) {
                return QStringList{rows.insertSelect(
                    QStringLiteral("callback_deliveries"), columns,
                    QStringLiteral("'wechat', %1, %2, %3, 1, 'none', 200, NULL, ?, ?, 'preload', NULL")
                        .arg(kPayNo, kOrderNo, at))};
            },
            {sizedText('h', 450), sizedText('b', 800)});
        if (!first.ok())
            return first.error();
        auto duplicates = insertInChunks(
            database, "duplicate deliveries", options.deliveries - firsts, firsts,
            [&](const RowNumbers &rows) {
                return QStringList{rows.insertSelect(
                    QStringLiteral("callback_deliveries"), columns,
                    QStringLiteral("'wechat', %1, %2, %3, 1, 'unique_index', 200, NULL, NULL, NULL, 'preload', NULL")
                        .arg(kPayNo, kOrderNo, at))};
            },
            {});
        if (!duplicates.ok())
            return duplicates.error();
    }
    std::fprintf(stderr, "payonce-bench:   refreshing the planner's statistics ...\n");
    if (auto analysed = analyse(database); !analysed.ok())
        return analysed.error();
    return database.read([&](sql::Session &session) -> Result<PreloadedCounts> {
        PreloadedCounts counts;
        for (auto [statement, into] :
             {std::pair{QStringLiteral("SELECT COUNT(*) FROM callback_deliveries"), &counts.deliveries},
              std::pair{QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"), &counts.paidOrders}}) {
            auto query = session.exec(statement, {}, QStringLiteral("preload count"));
            if (!query.ok())
                return query.error();
            QSqlQuery rows = std::move(query).value();
            if (!rows.next())
                return core::Error::make(core::ErrorCode::Internal, statement + QStringLiteral(": no row"));
            *into = rows.value(0).toLongLong();
        }
        return counts;
    });
}

Result<void> preloadAgedDeliveries(const QString &databaseUrl, qint64 count, qint64 receivedFromMs)
{
    auto url = config::DatabaseUrl::parse(databaseUrl);
    if (!url.ok())
        return url.error();
    sql::Database database(sql::DatabaseOptions{*url});
    // Ids -count … -1: below every id the run has handed out.
    return insertInChunks(
        database, "deliveries past retention", count, -count - 1,
        [&](const RowNumbers &rows) {
            return QStringList{rows.insertSelect(
                QStringLiteral("callback_deliveries"),
                QStringLiteral("id, channel, pay_no, order_no, received_at, verified, layer, http_status, headers, "
                               "raw_body, agent_id"),
                QStringLiteral("n, 'wechat', %1, %1, %2 + ((n + %3) % 43200000), 1, 'unique_index', 200, NULL, NULL, "
                               "'preload'")
                    .arg(concat(database.dialect(), QStringLiteral("AGED-T"), QStringLiteral("(0 - n)")))
                    .arg(receivedFromMs)
                    .arg(count + 1))};
        },
        {});
}

} // namespace payonce::bench
