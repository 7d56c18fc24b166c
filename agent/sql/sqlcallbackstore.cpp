#include "sqlcallbackstore.h"

#include "dialectsql.h"
#include "sqlfindings.h"

#include "core/qa/mutants.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::sql {

using core::CallbackOrder;
using core::Channel;
using core::Error;
using core::ErrorCode;
using core::OrderStatus;
using core::TransitionOutcome;

namespace {

QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}

/// The order whose order_no `orderNoSql` yields (an expression of the statement's first
/// binds) and its items, in one statement on a kept prepared statement: the callback path
/// reads an order for every new notification.
core::Result<std::optional<CallbackOrder>> readOrderWhere(Session &session, const QString &orderNoSql,
                                                          const QVariantList &binds)
{
    std::optional<CallbackOrder> found;
    auto read = session.forEachRow(
        QStringLiteral("SELECT o.order_no, o.user_id, o.amount_fen, o.currency, o.status, o.pay_no, o.paid_channel, "
                       "o.reward_coupon_template, o.reward_points, i.sku_id, i.qty FROM orders o "
                       "LEFT JOIN order_items i ON i.order_no = o.order_no WHERE o.order_no = %1 ORDER BY i.sku_id")
            .arg(orderNoSql),
        binds,
        [&](const QSqlQuery &q) -> core::Result<void> {
            if (!found) {
                CallbackOrder order;
                order.orderNo = q.value(0).toString();
                order.userId = q.value(1).toLongLong();
                order.amountFen = q.value(2).toLongLong();
                order.currency = q.value(3).toString();
                const auto status = core::orderStatusFromName(q.value(4).toString());
                if (!status)
                    return Error::make(ErrorCode::Internal,
                                       QStringLiteral("order %1 has an unknown status").arg(order.orderNo));
                order.status = *status;
                order.payNo = q.value(5).toString();
                order.paidChannel = q.value(6).toString();
                order.rewardCouponTemplate = q.value(7).toString();
                order.rewardPoints = q.value(8).toLongLong();
                found = order;
            }
            if (!q.isNull(9)) // an order without items has one row, its item columns NULL
                found->items.append({q.value(9).toString(), q.value(10).toLongLong()});
            return {};
        },
        QStringLiteral("read order for callback"));
    if (!read)
        return read.error();
    return found;
}

core::Result<std::optional<CallbackOrder>> readOrder(Session &session, const QString &orderNo)
{
    return readOrderWhere(session, QStringLiteral("?"), {orderNo});
}

/// n '?' placeholders, comma-separated.
QString marks(int n)
{
    QStringList marks;
    marks.fill(QStringLiteral("?"), n);
    return marks.join(QStringLiteral(", "));
}

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

const QString kInsertDeliveryHead = QStringLiteral(
    "INSERT INTO callback_deliveries (channel, pay_no, order_no, received_at, verified, layer, "
    "http_status, error_code, headers, raw_body, agent_id, trace_id)");
constexpr int kDeliveryColumns = 12;

/// A delivery's values, in kInsertDeliveryHead's order. The body and headers of a verified
/// delivery only (an unverified body is not ours to keep; a seen copy comes without one).
QVariantList deliveryValues(const core::DeliveryRecord &delivery)
{
    const QVariant none(QMetaType(QMetaType::QString));
    QVariant headers = none, body = none;
    if (delivery.verified && !delivery.rawBody.isEmpty()) {
        QJsonArray pairs;
        for (const auto &[name, value] : delivery.headers)
            pairs.append(QJsonArray{QString::fromLatin1(name), QString::fromLatin1(value)});
        headers = QString::fromUtf8(QJsonDocument(pairs).toJson(QJsonDocument::Compact));
        body = QString::fromUtf8(delivery.rawBody);
    }
    return {core::channelName(delivery.channel),
            textOrNull(delivery.payNo),
            textOrNull(delivery.orderNo),
            delivery.receivedAtMs,
            delivery.verified ? 1 : 0,
            layerName(delivery.layer),
            delivery.httpStatus,
            textOrNull(delivery.outcome),
            headers,
            body,
            textOrNull(delivery.agentId),
            textOrNull(delivery.traceId)};
}

/// One callback_deliveries row in the caller's transaction; its id.
core::Result<qint64> insertDelivery(Session &session, const core::DeliveryRecord &delivery)
{
    return session.execInsertReturningId(kInsertDeliveryHead + QStringLiteral(" VALUES (") + marks(kDeliveryColumns)
                                             + QStringLiteral(")"),
                                         deliveryValues(delivery), QStringLiteral("append callback delivery"));
}

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

core::Result<std::optional<CallbackOrder>> SqlCallbackStore::findOrderForPayment(const QString &paymentNo)
{
    // The payment record's order (payment_no is unique), or an order of that number.
    return m_database.read([&](Session &session) -> core::Result<std::optional<CallbackOrder>> {
        return readOrderWhere(
            session, QStringLiteral("COALESCE((SELECT order_no FROM payment_records WHERE payment_no = ?), ?)"),
            {paymentNo, paymentNo});
    });
}

core::Result<qint64> SqlCallbackStore::appendDelivery(const core::DeliveryRecord &delivery)
{
    return m_database.write([&](Session &session) { return insertDelivery(session, delivery); });
}

core::Result<QList<qint64>> SqlCallbackStore::appendDeliveries(const QList<core::DeliveryRecord> &deliveries)
{
    QList<QVariantList> rows;
    rows.reserve(deliveries.size());
    for (const core::DeliveryRecord &delivery : deliveries)
        rows.append(deliveryValues(delivery));
    return m_database.write([&](Session &session) -> core::Result<QList<qint64>> {
        return session.execInsertManyReturningIds(kInsertDeliveryHead, kDeliveryColumns, rows,
                                                  QStringLiteral("append callback deliveries"));
    });
}

core::Result<void> SqlCallbackStore::decideDelivery(qint64 id, Layer layer, int httpStatus, const QString &outcome)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        auto done = session.execAffected(
            QStringLiteral("UPDATE callback_deliveries SET layer = ?, http_status = ?, error_code = ? WHERE id = ?"),
            {layerName(layer), httpStatus, textOrNull(outcome), id}, QStringLiteral("decide callback delivery"));
        if (!done)
            return done.error();
        return {};
    });
}

core::Result<std::optional<core::RawDelivery>> SqlCallbackStore::rawDelivery(qint64 id)
{
    return m_database.read([&](Session &session) -> core::Result<std::optional<core::RawDelivery>> {
        auto query = session.exec(
            QStringLiteral("SELECT channel, headers, raw_body, received_at, trace_id FROM callback_deliveries "
                           "WHERE id = ? AND verified = 1"),
            {id}, QStringLiteral("read stored delivery"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        if (!q.next())
            return std::optional<core::RawDelivery>();
        core::RawDelivery raw;
        raw.channel = core::channelFromName(q.value(0).toString()).value_or(Channel::WeChat);
        const QJsonArray headers = QJsonDocument::fromJson(q.value(1).toString().toUtf8()).array();
        for (const QJsonValue &pair : headers) {
            const QJsonArray kv = pair.toArray();
            raw.headers.append({kv.at(0).toString().toLatin1(), kv.at(1).toString().toLatin1()});
        }
        raw.body = q.value(2).toString().toUtf8();
        raw.receivedAtMs = q.value(3).toLongLong();
        raw.traceId = q.value(4).toString();
        return std::optional<core::RawDelivery>(raw);
    });
}

core::Result<core::LogInsert> SqlCallbackStore::insertAccepted(const core::AcceptedCallback &row)
{
    auto inserted = m_log.insertAccepted(CallbackLogEntry{core::channelName(row.channel), row.payNo, row.orderNo,
                                                          row.amountFen, row.deliveryId, row.paymentNo});
    if (!inserted)
        return inserted.error();
    return inserted.value() == InsertOutcome::Inserted ? core::LogInsert::Inserted : core::LogInsert::Duplicate;
}

core::Result<bool> SqlCallbackStore::attachDelivery(core::Channel channel, const QString &payNo, qint64 deliveryId)
{
    return m_log.attachDelivery(core::channelName(channel), payNo, deliveryId);
}

core::Result<QList<core::AcceptedCallback>> SqlCallbackStore::listAccepted(qint64 createdBeforeMs, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::AcceptedCallback>> {
        auto query = session.exec(
            QStringLiteral("SELECT l.channel, l.pay_no, l.order_no, l.amount_fen, l.delivery_id, l.created_at, "
                           "COALESCE(l.payment_no, (SELECT p.payment_no FROM payment_records p WHERE p.order_no = "
                           "l.order_no AND p.channel = l.channel ORDER BY p.attempt DESC LIMIT 1)) "
                           "FROM pay_callback_log l WHERE l.status = 'accepted' AND l.created_at <= ? "
                           "ORDER BY l.created_at, l.id LIMIT %1")
                .arg(qMax(1, limit)),
            {createdBeforeMs}, QStringLiteral("list accepted callbacks"));
        if (!query)
            return query.error();
        QList<core::AcceptedCallback> rows;
        QSqlQuery &q = query.value();
        while (q.next()) {
            core::AcceptedCallback row;
            row.channel = core::channelFromName(q.value(0).toString()).value_or(Channel::WeChat);
            row.payNo = q.value(1).toString();
            row.orderNo = q.value(2).toString();
            row.amountFen = q.value(3).toLongLong();
            if (!q.value(4).isNull())
                row.deliveryId = q.value(4).toLongLong();
            row.createdAtMs = q.value(5).toLongLong();
            row.paymentNo = q.value(6).toString();
            rows.append(row);
        }
        return rows;
    });
}

core::Result<bool> SqlCallbackStore::raiseFinding(const core::CallbackFinding &finding)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        bool inserted = false;
        auto id = upsertFinding(session, finding, session.nowMs(), &inserted);
        if (!id)
            return id.error();
        return inserted;
    });
}

core::Result<void> SqlCallbackStore::inTransaction(
    const std::function<core::Result<void>(core::CallbackTransaction &)> &work)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        SqlCallbackTransaction tx(session, m_log, *this);
        return work(tx);
    });
}

namespace {
const QString kModeSetting = QStringLiteral("callbacks.mode");
} // namespace

core::Result<core::CallbackModeSetting> SqlCallbackModeStore::mode()
{
    return m_database.read([&](Session &session) -> core::Result<core::CallbackModeSetting> {
        auto query = session.exec(
            QStringLiteral("SELECT value, version, updated_at, updated_by, reason FROM settings WHERE name = ?"),
            {kModeSetting}, QStringLiteral("read callbacks mode"));
        if (!query)
            return query.error();
        core::CallbackModeSetting setting;
        QSqlQuery &q = query.value();
        if (!q.next())
            return setting;
        const QJsonObject value = QJsonDocument::fromJson(q.value(0).toString().toUtf8()).object();
        const auto mode = core::callbackModeFromName(value.value(QStringLiteral("mode")).toString());
        if (!mode)
            return Error::make(ErrorCode::Internal,
                               QStringLiteral("unknown callbacks mode in settings: %1").arg(q.value(0).toString()));
        setting.mode = *mode;
        setting.version = q.value(1).toLongLong();
        setting.changedAtMs = q.value(2).toLongLong();
        setting.actor = q.value(3).toString();
        setting.reason = q.value(4).toString();
        return setting;
    });
}

core::Result<void> SqlCallbackModeStore::setMode(core::CallbackMode mode, const QString &actor, const QString &reason,
                                                 qint64 now, const std::function<core::Result<void>()> &inTransaction)
{
    const QString json = QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("mode"), core::callbackModeName(mode)}})
            .toJson(QJsonDocument::Compact));
    return m_database.write([&](Session &session) -> core::Result<void> {
        static const QStringList columns{QStringLiteral("name"),       QStringLiteral("value"),
                                         QStringLiteral("version"),    QStringLiteral("updated_at"),
                                         QStringLiteral("updated_by"), QStringLiteral("reason")};
        auto inserted = session.execAffected(
            insertIfAbsentSql(session.dialect(), QStringLiteral("settings"), columns, QStringLiteral("name")),
            {kModeSetting, json, 1, now, actor, reason}, QStringLiteral("insert callbacks mode"));
        if (!inserted)
            return inserted.error();
        if (inserted.value() != 1) {
            auto updated = session.execAffected(
                QStringLiteral("UPDATE settings SET value = ?, version = version + 1, updated_at = ?, updated_by = ?, "
                               "reason = ? WHERE name = ?"),
                {json, now, actor, reason, kModeSetting}, QStringLiteral("update callbacks mode"));
            if (!updated)
                return updated.error();
        }
        return inTransaction ? inTransaction() : core::Result<void>();
    });
}

core::Result<qint64> SqlCallbackModeStore::acceptedWaiting()
{
    return m_database.read([&](Session &session) -> core::Result<qint64> {
        auto query = session.exec(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'accepted'"), {},
                                  QStringLiteral("count accepted callbacks"));
        if (!query)
            return query.error();
        return query.value().next() ? query.value().value(0).toLongLong() : qint64(0);
    });
}

} // namespace payonce::sql
