#include "sqlcallbacktransaction.h"

#include "dialectsql.h"
#include "groupedwrites.h"
#include "sqlcallbackrows.h"
#include "sqlcallbackstore.h"

#include "core/qa/mutants.h"

#include <QJsonDocument>
#include <QSqlQuery>

namespace payonce::sql {

using core::CallbackOrder;
using core::Channel;
using core::Error;
using core::ErrorCode;
using core::TransitionOutcome;
using namespace callbackrows;

namespace {

// The paid transaction's keyed rows (docs/design.md, "Callback path"): columns in the order
// of their binds, shared by the single writes and the grouped ones.
const QStringList kCouponColumns{QStringLiteral("order_no"),  QStringLiteral("user_id"), QStringLiteral("template_id"),
                                 QStringLiteral("status"),    QStringLiteral("fence"),   QStringLiteral("created_at"),
                                 QStringLiteral("updated_at")};
const QStringList kPointColumns{QStringLiteral("order_no"), QStringLiteral("user_id"), QStringLiteral("point_type"),
                                QStringLiteral("delta"),    QStringLiteral("fence"),   QStringLiteral("created_at")};
const QStringList kOutboxColumns{
    QStringLiteral("event_id"),        QStringLiteral("event_type"), QStringLiteral("aggregate_id"),
    QStringLiteral("payload"),         QStringLiteral("status"),     QStringLiteral("attempts"),
    QStringLiteral("next_attempt_at"), QStringLiteral("created_at"), QStringLiteral("trace_id")};
const QStringList kStockLogColumns{QStringLiteral("order_no"),  QStringLiteral("sku_id"), QStringLiteral("entry_key"),
                                   QStringLiteral("reason"),    QStringLiteral("qty"),    QStringLiteral("fence"),
                                   QStringLiteral("created_at")};
/// Binds: qty, now, sku_id, qty.
const QString kTakeStockSql = QStringLiteral(
    "UPDATE skus SET stock = stock - ?, updated_at = ? WHERE sku_id = ? AND stock >= ?");
/// Binds: now, payment_no.
const QString kPaymentRecordPaidSql = QStringLiteral(
    "UPDATE payment_records SET status = 'paid', updated_at = ? "
    "WHERE payment_no = ? AND status IN ('creating','pending','failed')");

/// How long a one-commit transaction's statement waits on another holder's lock: well
/// inside the platforms' ~5 s timeout, as the accepted-first way's log row insert.
constexpr int kOneCommitLockWaitMs = 1000;

class SqlCallbackTransaction final : public core::CallbackTransaction {
public:
    SqlCallbackTransaction(Session &session, SqlCallbackLog &log, SqlCallbackStore &store)
        : m_session(session), m_log(log), m_store(store)
    {
    }

    core::Result<std::optional<CallbackOrder>> order(const QString &orderNo) override
    {
        return readOrder(m_session, orderNo);
    }

    core::Result<TransitionOutcome> markPaid(const QString &orderNo, const QString &payNo, Channel channel,
                                             std::optional<qint64> fence) override
    {
        if (core::mutants::isOn(core::mutants::Mutant::CasIgnoresStatus))
            return paid(orderNo, payNo, channel, fence, QString());
        return paid(orderNo, payNo, channel, fence, QStringLiteral(" AND status IN ('PENDING','PAYING')"));
    }

    core::Result<TransitionOutcome> forcePaid(const QString &orderNo, const QString &payNo, Channel channel,
                                              std::optional<qint64> fence) override
    {
        return paid(orderNo, payNo, channel, fence, QString());
    }

    core::Result<bool> takeStock(const QString &skuId, qint64 qty) override
    {
        return changed(kTakeStockSql, {qty, m_session.nowMs(), skuId, qty}, QStringLiteral("take stock"));
    }

    core::Result<void> untakeStock(const QString &skuId, qint64 qty) override
    {
        auto done = changed(QStringLiteral("UPDATE skus SET stock = stock + ?, updated_at = ? WHERE sku_id = ?"),
                            {qty, m_session.nowMs(), skuId}, QStringLiteral("give back stock"));
        if (!done)
            return done.error();
        return {};
    }

    core::Result<bool> insertStockLog(const QString &orderNo, const QString &skuId, const QString &entryKey, qint64 qty,
                                      qint64 fence) override
    {
        return insertIfAbsent(QStringLiteral("stock_log"), kStockLogColumns,
                              {orderNo, skuId, entryKey, QStringLiteral("paid"), qty, fence, m_session.nowMs()});
    }

    core::Result<bool> insertCoupon(const QString &orderNo, qint64 userId, const QString &templateKey,
                                    qint64 fence) override
    {
        const qint64 now = m_session.nowMs();
        return insertIfAbsent(QStringLiteral("user_coupon"), kCouponColumns,
                              {orderNo, userId, templateKey, QStringLiteral("active"), fence, now, now});
    }

    core::Result<bool> insertPoints(const QString &orderNo, qint64 userId, const QString &pointType, qint64 delta,
                                    qint64 fence) override
    {
        return insertIfAbsent(QStringLiteral("point_log"), kPointColumns,
                              {orderNo, userId, pointType, delta, fence, m_session.nowMs()});
    }

    core::Result<bool> insertOutbox(const QString &eventId, const QString &eventType, const QString &aggregateId,
                                    const QJsonObject &payload, const QString &traceId) override
    {
        const qint64 now = m_session.nowMs();
        return insertIfAbsent(QStringLiteral("outbox"), kOutboxColumns,
                              {eventId, eventType, aggregateId,
                               QString::fromUtf8(QJsonDocument(payload).toJson(QJsonDocument::Compact)),
                               QStringLiteral("pending"), 0, now, now, textOrNull(traceId)});
    }

    core::Result<void> markPaymentRecordPaid(const QString &paymentNo) override
    {
        auto done = changed(kPaymentRecordPaidSql, {m_session.nowMs(), paymentNo},
                            QStringLiteral("payment record paid"));
        if (!done)
            return done.error();
        return {};
    }

    core::Result<bool> markProcessed(Channel channel, const QString &payNo, const QString &outcome) override
    {
        return m_log.markProcessed(m_session, core::channelName(channel), payNo, outcome);
    }

    core::Result<qint64> insertDelivery(const core::DeliveryRecord &delivery) override
    {
        return sql::insertDelivery(m_session, delivery);
    }

    core::Result<core::LogInsert> insertProcessed(const core::AcceptedCallback &row, const QString &outcome) override
    {
        auto inserted = m_log.insertProcessedIfAbsent(m_session,
                                                      CallbackLogEntry{core::channelName(row.channel), row.payNo,
                                                                       row.orderNo, row.amountFen, row.deliveryId,
                                                                       row.paymentNo},
                                                      outcome);
        if (!inserted)
            return inserted.error();
        return inserted.value() == InsertOutcome::Inserted ? core::LogInsert::Inserted : core::LogInsert::Duplicate;
    }

    core::Result<bool> raiseFinding(const core::CallbackFinding &finding) override
    {
        return m_store.raiseFinding(finding); // joins this transaction (nested write)
    }

    core::Result<bool> finishAcceptedRow(Channel channel, const QString &payNo, const QString &outcome,
                                         qint64 deliveryId) override
    {
        return m_log.markProcessedWithDelivery(m_session, core::channelName(channel), payNo, outcome, deliveryId);
    }

    core::Result<core::PaidRowsWritten> insertPaidRows(const core::PaidRows &rows) override
    {
        const qint64 now = m_session.nowMs();
        const Dialect dialect = m_session.dialect();
        const QString id = QStringLiteral("id");
        QList<GroupedWrite> writes;
        if (!rows.couponTemplateKey.isEmpty())
            writes << GroupedWrite{
                insertIfAbsentSql(dialect, QStringLiteral("user_coupon"), kCouponColumns, id),
                {rows.orderNo, rows.userId, rows.couponTemplateKey, QStringLiteral("active"), rows.fence, now, now}};
        if (rows.pointsDelta > 0)
            writes << GroupedWrite{insertIfAbsentSql(dialect, QStringLiteral("point_log"), kPointColumns, id),
                                   {rows.orderNo, rows.userId, rows.pointType, rows.pointsDelta, rows.fence, now}};
        writes << GroupedWrite{insertIfAbsentSql(dialect, QStringLiteral("outbox"), kOutboxColumns, id),
                               {rows.outboxEventId, rows.outboxEventType, rows.orderNo,
                                QString::fromUtf8(QJsonDocument(rows.outboxPayload).toJson(QJsonDocument::Compact)),
                                QStringLiteral("pending"), 0, now, now, textOrNull(rows.traceId)}}
               << GroupedWrite{kPaymentRecordPaidSql, {now, rows.paymentNo}};
        auto counts = execGrouped(m_session, writes, QStringLiteral("paid rows"));
        if (!counts)
            return counts.error();
        core::PaidRowsWritten written;
        qsizetype at = 0;
        if (!rows.couponTemplateKey.isEmpty())
            written.coupon = counts.value().at(at++) == 1;
        if (rows.pointsDelta > 0)
            written.points = counts.value().at(at++) == 1;
        written.outbox = counts.value().at(at) == 1;
        return written;
    }

    core::Result<core::StockTake> takeStockLogged(const QString &orderNo, const QString &skuId, const QString &entryKey,
                                                  qint64 qty, qint64 fence) override
    {
        if (m_session.dialect() != Dialect::PostgreSql) {
            core::StockTake take;
            auto taken = takeStock(skuId, qty);
            if (!taken.ok())
                return taken.error();
            take.taken = taken.value();
            if (!take.taken)
                return take;
            auto logged = insertStockLog(orderNo, skuId, entryKey, qty, fence);
            if (!logged.ok())
                return logged.error();
            take.logged = logged.value();
            return take;
        }
        // One statement: the ledger entry is written only when the stock was there.
        const qint64 now = m_session.nowMs();
        static const QString sql =
            QStringLiteral("WITH s AS (%1 RETURNING 1), l AS (INSERT INTO stock_log (%2) SELECT %3 WHERE EXISTS "
                           "(SELECT 1 FROM s) ON CONFLICT DO NOTHING RETURNING 1) "
                           "SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM l)")
                .arg(kTakeStockSql, kStockLogColumns.join(QStringLiteral(", ")),
                     castParameters({QStringLiteral("VARCHAR"), QStringLiteral("VARCHAR"), QStringLiteral("VARCHAR"),
                                     QStringLiteral("VARCHAR"), QStringLiteral("BIGINT"), QStringLiteral("BIGINT"),
                                     QStringLiteral("BIGINT")}));
        core::StockTake take;
        auto read = m_session.forEachRow(
            sql, {qty, now, skuId, qty, orderNo, skuId, entryKey, QStringLiteral("paid"), qty, fence, now},
            [&](const QSqlQuery &row) -> core::Result<void> {
                take.taken = row.value(0).toInt() == 1;
                take.logged = row.value(1).toInt() == 1;
                return {};
            },
            QStringLiteral("take stock, stock_log"));
        if (!read)
            return read.error();
        return take;
    }

    core::Result<std::pair<qint64, core::LogInsert>> insertDeliveryProcessed(const core::DeliveryRecord &delivery,
                                                                             const core::AcceptedCallback &row,
                                                                             const QString &outcome) override
    {
        CallbackLogEntry entry{
            core::channelName(row.channel), row.payNo, row.orderNo, row.amountFen, std::nullopt, row.paymentNo};
        if (m_session.dialect() != Dialect::PostgreSql) {
            auto id = insertDelivery(delivery);
            if (!id.ok())
                return id.error();
            entry.deliveryId = id.value();
            auto inserted = m_log.insertProcessedIfAbsent(m_session, entry, outcome);
            if (!inserted)
                return inserted.error();
            return std::pair{id.value(), inserted.value() == InsertOutcome::Inserted ? core::LogInsert::Inserted
                                                                                     : core::LogInsert::Duplicate};
        }
        // One statement: the delivery, and the log row naming it.
        const GroupedWrite logged = SqlCallbackLog::processedRowAfterDelivery(m_session, QStringLiteral("d"), entry,
                                                                              outcome);
        const QString sql = QStringLiteral("WITH d AS (%1 VALUES (%2) RETURNING id), l AS (%3 RETURNING 1) "
                                           "SELECT d.id, (SELECT count(*) FROM l) FROM d")
                                .arg(kInsertDeliveryHead, marks(kDeliveryColumns), logged.sql);
        std::optional<std::pair<qint64, core::LogInsert>> answer;
        auto read = m_session.forEachRow(
            sql, deliveryValues(delivery) + logged.binds,
            [&](const QSqlQuery &q) -> core::Result<void> {
                answer = std::pair{q.value(0).toLongLong(),
                                   q.value(1).toInt() == 1 ? core::LogInsert::Inserted : core::LogInsert::Duplicate};
                return {};
            },
            QStringLiteral("append callback delivery, pay_callback_log processed"));
        if (!read)
            return read.error();
        if (!answer)
            return core::Error::make(ErrorCode::Internal, QStringLiteral("the delivery insert returned no id"));
        return *answer;
    }

    core::Result<void> boundLockWaits() override { return m_session.boundLockWaits(kOneCommitLockWaitMs); }
    bool lockWaitEnded() const override { return m_session.lockWaitEnded(); }

private:
    core::Result<TransitionOutcome> paid(const QString &orderNo, const QString &payNo, Channel channel,
                                         std::optional<qint64> fence, const QString &statusGuard)
    {
        const qint64 now = m_session.nowMs();
        QString sql = QStringLiteral("UPDATE orders SET status = 'PAID', pay_no = ?, paid_channel = ?, paid_at = ?, "
                                     "updated_at = ?, version = version + 1");
        QVariantList binds{payNo, core::channelName(channel), now, now};
        if (fence) {
            sql += QStringLiteral(", fence = ?");
            binds << *fence;
        }
        sql += QStringLiteral(" WHERE order_no = ?") + statusGuard;
        binds << orderNo;
        if (fence) {
            // The fence check lives in the very statement that writes (docs/design.md rule 3).
            sql += QStringLiteral(" AND fence <= ?");
            binds << *fence;
        }
        auto affected = m_session.execAffected(sql, binds, QStringLiteral("order CAS to PAID"));
        if (!affected)
            return affected.error();
        if (affected.value() == 1)
            return TransitionOutcome::Transitioned;
        // 0 rows: the UPDATE decided; one read tells Lost from StaleFence for the answer. A
        // status the guard no longer admits, reached by another pay_no (or the closer), is
        // Lost whatever the fence says: the caller must see it as money received twice. The
        // same pay_no paid under a newer token is the fenced late writer: StaleFence.
        auto query = m_session.exec(QStringLiteral("SELECT fence, status, pay_no FROM orders WHERE order_no = ?"),
                                    {orderNo}, QStringLiteral("read order fence"));
        if (!query)
            return query.error();
        if (!query.value().next())
            return TransitionOutcome::NotFound;
        const QString status = query.value().value(1).toString();
        const bool movedOn = status != u"PENDING" && status != u"PAYING";
        if (!statusGuard.isEmpty() && movedOn && query.value().value(2).toString() != payNo)
            return TransitionOutcome::Lost;
        if (fence && query.value().value(0).toLongLong() > *fence)
            return TransitionOutcome::StaleFence;
        return TransitionOutcome::Lost;
    }

    core::Result<bool> changed(const QString &sql, const QVariantList &binds, const QString &what)
    {
        auto affected = m_session.execAffected(sql, binds, what);
        if (!affected)
            return affected.error();
        return affected.value() >= 1;
    }

    core::Result<bool> insertIfAbsent(const QString &table, const QStringList &columns, const QVariantList &binds)
    {
        auto affected = m_session.execAffected(
            insertIfAbsentSql(m_session.dialect(), table, columns, QStringLiteral("id")), binds,
            QStringLiteral("insert-if-absent ") + table);
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    }

    Session &m_session;
    SqlCallbackLog &m_log;
    SqlCallbackStore &m_store;
};

} // namespace

core::Result<void> runCallbackTransaction(Session &session, SqlCallbackLog &log, SqlCallbackStore &store,
                                          const std::function<core::Result<void>(core::CallbackTransaction &)> &work)
{
    SqlCallbackTransaction tx(session, log, store);
    return work(tx);
}

} // namespace payonce::sql
