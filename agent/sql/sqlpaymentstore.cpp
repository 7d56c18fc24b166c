#include "sqlpaymentstore.h"

#include "dialectsql.h"

namespace payonce::sql {

using core::Channel;
using core::Error;
using core::ErrorCode;
using core::OrderSnapshot;
using core::OrderStatus;
using core::PaymentRecord;
using core::PaymentRecordStatus;

namespace {

core::Result<std::optional<OrderSnapshot>> readOrder(SqlOrders &orders, Session &session, const QString &orderNo)
{
    Error error;
    const auto row = orders.find(session, orderNo, &error);
    if (!row) {
        if (error.code == ErrorCode::NotFound)
            return std::optional<OrderSnapshot>();
        return error;
    }
    return std::optional<OrderSnapshot>(OrderSnapshot{row->orderNo, row->userId, row->amountFen, row->status});
}

class SqlConfirmTransaction final : public core::ConfirmTransaction {
public:
    SqlConfirmTransaction(Session &session, SqlOrders &orders) : m_session(session), m_orders(orders) {}

    core::Result<std::optional<OrderSnapshot>> order(const QString &orderNo) override
    {
        return readOrder(m_orders, m_session, orderNo);
    }

    core::Result<bool> insertRecordIfAbsent(const PaymentRecord &record) override
    {
        static const QStringList columns{QStringLiteral("payment_no"), QStringLiteral("order_no"),
                                         QStringLiteral("channel"),    QStringLiteral("status"),
                                         QStringLiteral("attempt"),    QStringLiteral("amount_fen"),
                                         QStringLiteral("created_at"), QStringLiteral("updated_at")};
        const qint64 now = m_session.nowMs();
        auto affected = m_session.execAffected(
            insertIfAbsentSql(m_session.dialect(), QStringLiteral("payment_records"), columns, QStringLiteral("id")),
            {record.paymentNo, record.orderNo, core::channelName(record.channel),
             core::paymentRecordStatusName(record.status), record.attempt, record.amountFen, now, now},
            QStringLiteral("insert-if-absent payment_records"));
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    }

    core::Result<std::optional<PaymentRecord>> record(const QString &orderNo, Channel channel) override
    {
        auto query = m_session.exec(
            QStringLiteral("SELECT payment_no, order_no, channel, status, attempt, amount_fen, code_url, last_error "
                           "FROM payment_records WHERE order_no = ? AND channel = ?"),
            {orderNo, core::channelName(channel)}, QStringLiteral("read payment record"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        if (!q.next())
            return std::optional<PaymentRecord>();
        const auto status = core::paymentRecordStatusFromName(q.value(3).toString());
        if (!status)
            return Error::make(ErrorCode::Internal,
                               QStringLiteral("payment record with unknown status %1").arg(q.value(3).toString()));
        return std::optional<PaymentRecord>(PaymentRecord{q.value(0).toString(), q.value(1).toString(), channel,
                                                          *status, q.value(4).toInt(), q.value(5).toLongLong(),
                                                          q.value(6).toString(), q.value(7).toString()});
    }

    core::Result<bool> renumberRecord(const QString &paymentNo, const QString &newPaymentNo) override
    {
        return cas(QStringLiteral("UPDATE payment_records SET payment_no = ?, updated_at = ? "
                                  "WHERE payment_no = ? AND status = 'creating'"),
                   {newPaymentNo, m_session.nowMs(), paymentNo}, QStringLiteral("renumber payment record"));
    }

    core::Result<bool> reuseFailedRecord(const QString &paymentNo) override
    {
        return cas(QStringLiteral("UPDATE payment_records SET status = 'creating', attempt = attempt + 1, "
                                  "last_error = NULL, updated_at = ? WHERE payment_no = ? AND status = 'failed'"),
                   {m_session.nowMs(), paymentNo}, QStringLiteral("reuse failed payment record"));
    }

    core::Result<core::TransitionOutcome> transition(const QString &orderNo, OrderStatus from, OrderStatus to,
                                                     std::optional<qint64> fence) override
    {
        if (fence)
            return m_orders.transition(m_session, orderNo, from, to, *fence);
        // No lock and so no fencing token (the key store is down): the status guard decides.
        auto affected = m_session.execAffected(
            QStringLiteral("UPDATE orders SET status = ?, version = version + 1, updated_at = ? "
                           "WHERE order_no = ? AND status = ?"),
            {core::orderStatusName(to), m_session.nowMs(), orderNo, core::orderStatusName(from)},
            QStringLiteral("order CAS (unfenced)"));
        if (!affected)
            return affected.error();
        if (affected.value() == 1)
            return core::TransitionOutcome::Transitioned;
        auto row = readOrder(m_orders, m_session, orderNo);
        if (!row)
            return row.error();
        return row.value() ? core::TransitionOutcome::Lost : core::TransitionOutcome::NotFound;
    }

    core::Result<bool> markRecordPending(const QString &paymentNo, const QString &codeUrl) override
    {
        return cas(QStringLiteral("UPDATE payment_records SET status = 'pending', code_url = ?, updated_at = ? "
                                  "WHERE payment_no = ? AND status = 'creating'"),
                   {codeUrl, m_session.nowMs(), paymentNo}, QStringLiteral("payment record pending"));
    }

    core::Result<bool> markRecordFailed(const QString &paymentNo, const QString &lastError) override
    {
        return cas(QStringLiteral("UPDATE payment_records SET status = 'failed', last_error = ?, updated_at = ? "
                                  "WHERE payment_no = ? AND status = 'creating'"),
                   {lastError, m_session.nowMs(), paymentNo}, QStringLiteral("payment record failed"));
    }

private:
    core::Result<bool> cas(const QString &sql, const QVariantList &binds, const QString &what)
    {
        auto affected = m_session.execAffected(sql, binds, what);
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    }

    Session &m_session;
    SqlOrders &m_orders;
};

} // namespace

core::Result<std::optional<OrderSnapshot>> SqlPaymentStore::findOrder(const QString &orderNo)
{
    return m_database.read([&](Session &session) { return readOrder(m_orders, session, orderNo); });
}

core::Result<void> SqlPaymentStore::inTransaction(
    const std::function<core::Result<void>(core::ConfirmTransaction &)> &work)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        SqlConfirmTransaction tx(session, m_orders);
        return work(tx);
    });
}

} // namespace payonce::sql
