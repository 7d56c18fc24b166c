#include "sqlcompensationstore.h"

#include "dialectsql.h"
#include "sqlrefunds.h"
#include "sqlstockledger.h"

#include "core/qa/mutants.h"

#include <QJsonDocument>
#include <QSet>
#include <QUuid>

namespace payonce::sql {

using core::Compensation;
using core::Error;
using core::ErrorCode;

namespace {

const QString kColumns = QStringLiteral(
    "id, kind, order_no, finding_id, dedup_key, status, proposed_by, "
    "proposal_reason, decided_by, decision_reason, result, created_at, pay_no, amount_fen, "
    "refund_items");

core::Result<Compensation> fromRow(const QSqlQuery &q)
{
    Compensation c;
    c.id = q.value(0).toLongLong();
    const auto kind = core::compensationKindFromName(q.value(1).toString());
    if (!kind)
        return Error::make(ErrorCode::Internal, QStringLiteral("compensation %1 has an unknown kind").arg(c.id));
    c.kind = *kind;
    c.orderNo = q.value(2).toString();
    if (!q.value(3).isNull())
        c.findingId = q.value(3).toLongLong();
    c.dedupKey = q.value(4).toString();
    c.status = q.value(5).toString();
    c.proposedBy = q.value(6).toString();
    c.proposalReason = q.value(7).toString();
    c.decidedBy = q.value(8).toString();
    c.decisionReason = q.value(9).toString();
    c.result = QJsonDocument::fromJson(q.value(10).toString().toUtf8()).object();
    c.createdAtMs = q.value(11).toLongLong();
    c.payNo = q.value(12).toString();
    if (!q.value(13).isNull())
        c.amountFen = q.value(13).toLongLong();
    c.refundItems = core::refundItemsFromText(q.value(14).toString());
    return c;
}

core::Result<std::optional<Compensation>> selectOne(Session &session, const QString &where, const QVariant &bind)
{
    auto query = session.exec(QStringLiteral("SELECT %1 FROM compensations WHERE %2").arg(kColumns, where), {bind},
                              QStringLiteral("read compensation"));
    if (!query)
        return query.error();
    if (!query.value().next())
        return std::optional<Compensation>();
    auto row = fromRow(query.value());
    if (!row)
        return row.error();
    return std::optional<Compensation>(row.value());
}

class SqlCompensationTransaction final : public core::CompensationTransaction {
public:
    explicit SqlCompensationTransaction(Session &session) : m_session(session) {}

    core::Result<std::optional<qint64>> insertProposal(const core::CompensationProposal &p, qint64 nowMs) override
    {
        const QString key = p.dedupKey.isEmpty()
                                ? QStringLiteral("operator:") + QUuid::createUuid().toString(QUuid::WithoutBraces)
                                : p.dedupKey;
        static const QStringList columns{QStringLiteral("kind"),
                                         QStringLiteral("order_no"),
                                         QStringLiteral("finding_id"),
                                         QStringLiteral("dedup_key"),
                                         QStringLiteral("status"),
                                         QStringLiteral("proposed_by"),
                                         QStringLiteral("proposal_reason"),
                                         QStringLiteral("created_at"),
                                         QStringLiteral("updated_at"),
                                         QStringLiteral("pay_no"),
                                         QStringLiteral("amount_fen"),
                                         QStringLiteral("refund_items")};
        const QString itemsText = core::refundItemsText(p.refundItems);
        auto inserted = m_session.execAffected(
            insertIfAbsentSql(m_session.dialect(), QStringLiteral("compensations"), columns, QStringLiteral("id")),
            {core::compensationKindName(p.kind), p.orderNo,
             p.findingId ? QVariant(*p.findingId) : QVariant(QMetaType(QMetaType::LongLong)), key,
             QStringLiteral("proposed"), p.proposedBy, p.reason, nowMs, nowMs,
             p.payNo.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(p.payNo),
             p.amountFen ? QVariant(*p.amountFen) : QVariant(QMetaType(QMetaType::LongLong)),
             itemsText.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(itemsText)},
            QStringLiteral("insert compensation"));
        if (!inserted)
            return inserted.error();
        if (inserted.value() == 0)
            return std::optional<qint64>();
        auto row = findByDedupKey(key);
        if (!row)
            return row.error();
        if (!row.value())
            return Error::make(ErrorCode::Internal, QStringLiteral("compensation vanished after its insert"));
        return std::optional<qint64>(row.value()->id);
    }

    core::Result<std::optional<Compensation>> find(qint64 id) override
    {
        return selectOne(m_session, QStringLiteral("id = ?"), id);
    }

    core::Result<std::optional<Compensation>> findByDedupKey(const QString &dedupKey) override
    {
        return selectOne(m_session, QStringLiteral("dedup_key = ?"), dedupKey);
    }

    core::Result<bool> decide(qint64 id, const QString &to, const QString &actor, const QString &reason,
                              qint64 nowMs) override
    {
        // The four-eyes rule is also in the statement: the proposer never decides.
        QString sql = QStringLiteral("UPDATE compensations SET status = ?, decided_by = ?, decision_reason = ?, "
                                     "decided_at = ?, updated_at = ? WHERE id = ? AND status = 'proposed'");
        QVariantList binds{to, actor, reason, nowMs, nowMs, id};
        if (!core::mutants::isOn(core::mutants::Mutant::ApproveOwnProposal)) {
            sql += QStringLiteral(" AND proposed_by <> ?");
            binds << actor;
        }
        auto changed = m_session.execAffected(sql, binds, QStringLiteral("decide compensation"));
        if (!changed)
            return changed.error();
        return changed.value() == 1;
    }

    core::Result<bool> markExecuted(qint64 id, const QJsonObject &result, qint64 nowMs) override
    {
        auto changed = m_session.execAffected(
            QStringLiteral("UPDATE compensations SET status = 'executed', result = ?, executed_at = ?, updated_at = ? "
                           "WHERE id = ? AND status = 'approved'"),
            {QString::fromUtf8(QJsonDocument(result).toJson(QJsonDocument::Compact)), nowMs, nowMs, id},
            QStringLiteral("compensation executed"));
        if (!changed)
            return changed.error();
        return changed.value() == 1;
    }

    core::Result<QList<qint64>> freezeExtraCoupons(const QString &orderNo, qint64 nowMs) override
    {
        auto order = readOrder(orderNo);
        if (!order)
            return order.error();
        auto coupons = m_session.exec(
            QStringLiteral(
                "SELECT id, template_id FROM user_coupon WHERE order_no = ? AND status = 'active' ORDER BY id"),
            {orderNo}, QStringLiteral("active coupons"));
        if (!coupons)
            return coupons.error();
        QList<qint64> extra;
        bool keptOwed = !order.value().owes; // an order that is not PAID or REFUNDING is owed none
        while (coupons.value().next()) {
            const qint64 id = coupons.value().value(0).toLongLong();
            if (!keptOwed && !order.value().rewardTemplate.isEmpty()
                && coupons.value().value(1).toString() == order.value().rewardTemplate)
                keptOwed = true;
            else
                extra.append(id);
        }
        QList<qint64> frozen;
        for (qint64 id : extra) {
            auto changed = m_session.execAffected(
                QStringLiteral(
                    "UPDATE user_coupon SET status = 'frozen', updated_at = ? WHERE id = ? AND status = 'active'"),
                {nowMs, id}, QStringLiteral("freeze coupon"));
            if (!changed)
                return changed.error();
            if (changed.value() == 1)
                frozen.append(id);
        }
        return frozen;
    }

    core::Result<qint64> reverseExtraPoints(const QString &orderNo, const QString &pointType, qint64 nowMs) override
    {
        auto order = readOrder(orderNo);
        if (!order)
            return order.error();
        auto sum = m_session.exec(QStringLiteral("SELECT COALESCE(SUM(delta), 0) FROM point_log WHERE order_no = ?"),
                                  {orderNo}, QStringLiteral("points net"));
        if (!sum)
            return sum.error();
        const qint64 net = sum.value().next() ? sum.value().value(0).toLongLong() : 0;
        const qint64 owed = order.value().owes ? order.value().rewardPoints : 0;
        if (net <= owed)
            return qint64(0);
        const qint64 delta = owed - net;
        static const QStringList columns{QStringLiteral("order_no"),   QStringLiteral("user_id"),
                                         QStringLiteral("point_type"), QStringLiteral("delta"),
                                         QStringLiteral("fence"),      QStringLiteral("created_at")};
        auto inserted = m_session.execAffected(
            insertIfAbsentSql(m_session.dialect(), QStringLiteral("point_log"), columns, QStringLiteral("id")),
            {orderNo, order.value().userId, pointType, delta, order.value().fence, nowMs},
            QStringLiteral("reverse points"));
        if (!inserted)
            return inserted.error();
        return inserted.value() == 1 ? delta : qint64(0);
    }

    core::Result<QJsonObject> restoreExtraStock(const QString &orderNo, const QString &reversalKey,
                                                qint64 nowMs) override
    {
        auto order = readOrder(orderNo);
        if (!order)
            return order.error();
        QMap<QString, qint64> owed;
        if (order.value().owes) {
            auto items = m_session.exec(QStringLiteral("SELECT sku_id, qty FROM order_items WHERE order_no = ?"),
                                        {orderNo}, QStringLiteral("items"));
            if (!items)
                return items.error();
            while (items.value().next())
                owed[items.value().value(0).toString()] += items.value().value(1).toLongLong();
            // Items a partial refund gave back are no longer owed.
            for (auto it = order.value().refundedItems.cbegin(); it != order.value().refundedItems.cend(); ++it)
                owed[it.key()] -= it.value();
        }
        auto held = netStockOf(m_session, orderNo);
        if (!held)
            return held.error();
        // Only what the order holds beyond what it owes goes back; the rest is named.
        QMap<QString, qint64> extra;
        QJsonObject refused;
        QSet<QString> skus(owed.keyBegin(), owed.keyEnd());
        for (auto it = held.value().cbegin(); it != held.value().cend(); ++it)
            skus.insert(it.key());
        for (const QString &sku : std::as_const(skus)) {
            const qint64 have = held.value().value(sku);
            if (have > owed.value(sku))
                extra.insert(sku, have - owed.value(sku));
            else
                refused.insert(sku, have <= 0 ? kNothingTaken : kStillOwed);
        }
        auto given = giveBackStock(m_session, orderNo, extra, reversalKey, QStringLiteral("restore_stock"),
                                   order.value().fence, nowMs);
        if (!given)
            return given.error();
        const QJsonObject notGiven = given.value().refused;
        for (auto it = notGiven.begin(); it != notGiven.end(); ++it)
            refused.insert(it.key(), it.value());
        QJsonObject result{{QStringLiteral("stock_restored"), given.value().restored}};
        if (!refused.isEmpty())
            result.insert(QStringLiteral("stock_refused"), refused);
        return result;
    }

    core::Result<core::RefundRecord> requestRefund(const Compensation &c, qint64 nowMs) override
    {
        return sql::requestRefund(m_session, c, nowMs);
    }

    core::Result<void> checkRefund(const core::CompensationProposal &proposal) override
    {
        return sql::checkRefund(m_session, proposal);
    }

private:
    struct OrderOwed {
        bool owes = false; ///< PAID or REFUNDING: it is owed its items, coupon and points
        qint64 userId = 0;
        qint64 fence = 0;
        QString rewardTemplate;
        qint64 rewardPoints = 0;         ///< owed: reward_points less what partial refunds took back
        core::RefundItems refundedItems; ///< given back by partial refunds: no longer owed
    };

    core::Result<OrderOwed> readOrder(const QString &orderNo)
    {
        // Locked for the rest of the approval: a refund settling the same order waits, so
        // what is owed cannot change between this read and the compensation's writes.
        auto query = m_session.exec(
            QStringLiteral("SELECT status, user_id, fence, reward_coupon_template, reward_points "
                           "FROM orders WHERE order_no = ?")
                + forUpdate(m_session.dialect()),
            {orderNo}, QStringLiteral("order for compensation"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        if (!q.next())
            return Error::make(ErrorCode::NotFound, QStringLiteral("no order %1").arg(orderNo));
        OrderOwed o;
        // REFUNDING owes what PAID owes: the refund may still fail and put it back to PAID,
        // and its success takes the effects back itself.
        const QString status = q.value(0).toString();
        o.owes = status == u"PAID" || status == u"REFUNDING";
        o.userId = q.value(1).toLongLong();
        o.fence = q.value(2).toLongLong();
        o.rewardTemplate = q.value(3).toString();
        o.rewardPoints = q.value(4).toLongLong();
        auto partial = partialRefundsOf(m_session, orderNo);
        if (!partial)
            return partial.error();
        o.rewardPoints = core::pointsStillOwed(o.rewardPoints, partial.value().refundedFen, partial.value().paidFen);
        o.refundedItems = partial.value().items;
        return o;
    }

    Session &m_session;
};

} // namespace

core::Result<QList<Compensation>> SqlCompensationStore::list(const QString &status, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<Compensation>> {
        const bool all = status.isEmpty();
        auto query = session.exec(QStringLiteral("SELECT %1 FROM compensations %2 ORDER BY id DESC LIMIT %3")
                                      .arg(kColumns, all ? QString() : QStringLiteral("WHERE status = ?"))
                                      .arg(limit),
                                  all ? QVariantList{} : QVariantList{status}, QStringLiteral("list compensations"));
        if (!query)
            return query.error();
        QList<Compensation> rows;
        while (query.value().next()) {
            auto row = fromRow(query.value());
            if (!row)
                return row.error();
            rows.append(row.value());
        }
        return rows;
    });
}

core::Result<void> SqlCompensationStore::inTransaction(
    const std::function<core::Result<void>(core::CompensationTransaction &)> &work)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        SqlCompensationTransaction tx(session);
        return work(tx);
    });
}

} // namespace payonce::sql
