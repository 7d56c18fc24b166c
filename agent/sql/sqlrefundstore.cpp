#include "sqlrefundstore.h"

#include "dialectsql.h"
#include "sqlauditwriter.h"
#include "sqlfindings.h"
#include "sqlrefunds.h"
#include "sqlstockledger.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::sql {

using core::Error;
using core::ErrorCode;
using core::RefundRecord;
using core::RefundSettlement;

namespace {

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}

/// A settled refund is no longer waiting for manual handling: its refund_abnormal finding, if
/// any is open, resolves.
core::Result<void> resolveAbnormal(Session &session, const QString &refundNo, qint64 nowMs)
{
    auto resolved = session.execAffected(
        QStringLiteral("UPDATE findings SET status = 'resolved', resolved_at = ? "
                       "WHERE kind = 'refund_abnormal' AND subject = ? AND status = 'open'"),
        {nowMs, QString(QStringLiteral("refund:") + refundNo)}, QStringLiteral("resolve refund_abnormal"));
    if (!resolved)
        return resolved.error();
    return {};
}

/// Takes back `wanted` of the order's net points (all of them: nullopt), never more than
/// it holds, by one point_log entry keyed `key`: the points taken back (0: none, or taken
/// back under this key before).
core::Result<qint64> takeBackPoints(Session &session, const QString &orderNo, qint64 userId, qint64 fence,
                                    const QString &key, std::optional<qint64> wanted, qint64 nowMs)
{
    auto net = session.exec(QStringLiteral("SELECT COALESCE(SUM(delta), 0) FROM point_log WHERE order_no = ?"),
                            {orderNo}, QStringLiteral("points of the order"));
    if (!net)
        return net.error();
    const qint64 held = std::max<qint64>(net.value().next() ? net.value().value(0).toLongLong() : 0, 0);
    const qint64 points = std::min(wanted.value_or(held), held);
    if (points <= 0)
        return qint64(0);
    static const QStringList columns{QStringLiteral("order_no"),   QStringLiteral("user_id"),
                                     QStringLiteral("point_type"), QStringLiteral("delta"),
                                     QStringLiteral("fence"),      QStringLiteral("created_at")};
    auto inserted = session.execAffected(
        insertIfAbsentSql(session.dialect(), QStringLiteral("point_log"), columns, QStringLiteral("id")),
        {orderNo, userId, key, -points, fence, nowMs}, QStringLiteral("take back refunded points"));
    if (!inserted)
        return inserted.error();
    return inserted.value() == 1 ? points : qint64(0);
}

/// What a refund's settlement needs of its order.
struct RefundedOrder {
    qint64 userId = 0;
    qint64 fence = 0;
    qint64 rewardPoints = 0;
    QString status;
};

core::Result<RefundedOrder> refundedOrder(Session &session, const QString &orderNo)
{
    auto order = session.exec(
        QStringLiteral("SELECT user_id, fence, reward_points, status FROM orders WHERE order_no = ?"), {orderNo},
        QStringLiteral("refunded order"));
    if (!order)
        return order.error();
    if (!order.value().next())
        return Error::make(ErrorCode::Internal, QStringLiteral("order %1 vanished").arg(orderNo));
    return RefundedOrder{order.value().value(0).toLongLong(), order.value().value(1).toLongLong(),
                         order.value().value(2).toLongLong(), order.value().value(3).toString()};
}

/// The order's own payment came back: everything the payment earned is undone, each
/// under its own key so it happens once.
core::Result<QJsonObject> undoEffects(Session &session, const RefundRecord &r, qint64 nowMs)
{
    auto moved = session.execAffected(QStringLiteral("UPDATE orders SET status = 'REFUNDED', version = version + 1, "
                                                     "updated_at = ? WHERE order_no = ? AND status = 'REFUNDING'"),
                                      {nowMs, r.orderNo}, QStringLiteral("order REFUNDING -> REFUNDED"));
    if (!moved)
        return moved.error();
    if (moved.value() != 1)
        return Error::make(ErrorCode::Internal, QStringLiteral("order %1 is not REFUNDING").arg(r.orderNo));
    auto order = refundedOrder(session, r.orderNo);
    if (!order)
        return order.error();
    const qint64 userId = order->userId;
    const qint64 fence = order->fence;
    const QString key = QStringLiteral("refund:") + r.refundNo;

    auto frozen = session.execAffected(QStringLiteral("UPDATE user_coupon SET status = 'frozen', updated_at = ? "
                                                      "WHERE order_no = ? AND status = 'active'"),
                                       {nowMs, r.orderNo}, QStringLiteral("freeze refunded coupons"));
    if (!frozen)
        return frozen.error();

    auto reversed = takeBackPoints(session, r.orderNo, userId, fence, key, std::nullopt, nowMs);
    if (!reversed)
        return reversed.error();

    // Everything the order still holds goes back, under the refund's own entry key.
    auto held = netStockOf(session, r.orderNo);
    if (!held)
        return held.error();
    QMap<QString, qint64> all;
    for (auto it = held.value().cbegin(); it != held.value().cend(); ++it) {
        if (it.value() > 0)
            all.insert(it.key(), it.value());
    }
    auto given = giveBackStock(session, r.orderNo, all, key, QStringLiteral("refund"), fence, nowMs);
    if (!given)
        return given.error();
    const QJsonObject restored = given.value().restored;

    static const QStringList outboxColumns{QStringLiteral("event_id"),        QStringLiteral("event_type"),
                                           QStringLiteral("aggregate_id"),    QStringLiteral("payload"),
                                           QStringLiteral("status"),          QStringLiteral("attempts"),
                                           QStringLiteral("next_attempt_at"), QStringLiteral("created_at")};
    const QJsonObject payload{{QStringLiteral("order_no"), r.orderNo},
                              {QStringLiteral("refund_no"), r.refundNo},
                              {QStringLiteral("pay_no"), r.payNo},
                              {QStringLiteral("channel"), core::channelName(r.channel)},
                              {QStringLiteral("amount_fen"), r.amountFen}};
    auto outboxed = session.execAffected(
        insertIfAbsentSql(session.dialect(), QStringLiteral("outbox"), outboxColumns, QStringLiteral("id")),
        {QString(QStringLiteral("order.refunded:") + r.orderNo), QStringLiteral("order.refunded"), r.orderNo,
         compact(payload), QStringLiteral("pending"), 0, nowMs, nowMs},
        QStringLiteral("order.refunded event"));
    if (!outboxed)
        return outboxed.error();

    return QJsonObject{{QStringLiteral("order_status"), QStringLiteral("REFUNDED")},
                       {QStringLiteral("coupons_frozen"), frozen.value()},
                       {QStringLiteral("points_reversed"), reversed.value()},
                       {QStringLiteral("stock_restored"), restored}};
}

/// A partial refund of the order's own payment came back: the order stays PAID, its
/// reward coupon stays active; the points it earned are taken back in proportion to the
/// money (core::pointsTakenBack over every partial refund so far, so no rounding drifts),
/// and the refund's items go back to the shelf — each under the refund's own key, once,
/// never more than the order holds.
core::Result<QJsonObject> undoPart(Session &session, const RefundRecord &r, qint64 nowMs)
{
    // Settlements of one order's refunds take turns from here: each sums the others'.
    if (auto locked = lockOrder(session, r.orderNo); !locked)
        return locked.error();
    auto order = refundedOrder(session, r.orderNo);
    if (!order)
        return order.error();
    const qint64 userId = order->userId;
    const qint64 fence = order->fence;
    const qint64 rewardPoints = order->rewardPoints;
    const QString status = order->status;
    const QString key = QStringLiteral("refund:") + r.refundNo;

    auto all = partialRefundsOf(session, r.orderNo); // this one included: it is succeeded now
    if (!all)
        return all.error();
    const qint64 refundedAfter = all.value().refundedFen;
    const qint64 refundedBefore = refundedAfter - r.amountFen;
    const qint64 owedPoints = core::pointsTakenBack(rewardPoints, refundedAfter, r.totalFen)
                              - core::pointsTakenBack(rewardPoints, refundedBefore, r.totalFen);
    auto reversed = takeBackPoints(session, r.orderNo, userId, fence, key, owedPoints, nowMs);
    if (!reversed)
        return reversed.error();
    auto given = giveBackStock(session, r.orderNo, r.items, key, QStringLiteral("refund"), fence, nowMs);
    if (!given)
        return given.error();
    QJsonObject effects{{QStringLiteral("order_status"), status},
                        {QStringLiteral("points_reversed"), reversed.value()},
                        {QStringLiteral("stock_restored"), given.value().restored},
                        {QStringLiteral("refunded_so_far_fen"), refundedAfter}};
    if (!given.value().refused.isEmpty())
        effects.insert(QStringLiteral("stock_refused"), given.value().refused);
    return effects;
}

} // namespace

core::Result<std::optional<RefundRecord>> SqlRefundStore::find(const QString &refundNo)
{
    return m_database.read([&](Session &session) { return readRefund(session, refundNo); });
}

core::Result<bool> SqlRefundStore::claimSubmission(const QString &refundNo, qint64 nowMs, qint64 leaseMs)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        auto claimed = session.execAffected(
            QStringLiteral("UPDATE refunds SET sending_until = ? WHERE refund_no = ? AND status = 'requested' "
                           "AND (sending_until IS NULL OR sending_until < ?)"),
            {nowMs + leaseMs, refundNo, nowMs}, QStringLiteral("claim refund submission"));
        if (!claimed)
            return claimed.error();
        return claimed.value() == 1;
    });
}

core::Result<void> SqlRefundStore::recordAttempt(const QString &refundNo, bool accepted,
                                                 const QString &platformRefundId, const QString &error, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        auto done = session.execAffected(
            QStringLiteral("UPDATE refunds SET attempts = attempts + 1, status = ?, sending_until = NULL, "
                           "platform_refund_id = COALESCE(?, platform_refund_id), last_error = ?, updated_at = ? "
                           "WHERE refund_no = ? AND status IN ('requested', 'processing')"),
            {accepted ? QStringLiteral("processing") : QStringLiteral("requested"), textOrNull(platformRefundId),
             textOrNull(error.left(500)), nowMs, refundNo},
            QStringLiteral("refund attempt"));
        if (!done)
            return done.error();
        return {};
    });
}

core::Result<RefundSettlement> SqlRefundStore::settleSucceeded(const QString &refundNo, const QString &platformRefundId,
                                                               const QString &actor, const QString &reason,
                                                               qint64 nowMs)
{
    RefundSettlement outcome = RefundSettlement::Unknown;
    auto done = m_database.write([&](Session &session) -> core::Result<void> {
        outcome = RefundSettlement::Unknown;
        auto row = readRefund(session, refundNo);
        if (!row)
            return row.error();
        if (!row.value())
            return {};
        const RefundRecord r = *row.value();
        // The CAS decides: however many notifications, follow-ups and agents, one wins.
        auto won = session.execAffected(
            QStringLiteral(
                "UPDATE refunds SET status = 'succeeded', platform_refund_id = COALESCE(?, platform_refund_id), "
                "finished_at = ?, updated_at = ? WHERE refund_no = ? AND status IN ('requested', 'processing')"),
            {textOrNull(platformRefundId), nowMs, nowMs, refundNo}, QStringLiteral("refund succeeded"));
        if (!won)
            return won.error();
        if (won.value() != 1) {
            outcome = RefundSettlement::AlreadySettled;
            return {};
        }
        QJsonObject after{{QStringLiteral("status"), QStringLiteral("succeeded")},
                          {QStringLiteral("amount_fen"), r.amountFen},
                          {QStringLiteral("pay_no"), r.payNo}};
        if (r.ownPayment) {
            auto undone = r.partial ? undoPart(session, r, nowMs) : undoEffects(session, r, nowMs);
            if (!undone)
                return undone.error();
            after.insert(QStringLiteral("effects"), undone.value());
        }
        if (auto resolved = resolveAbnormal(session, refundNo, nowMs); !resolved)
            return resolved.error();
        auto audited = SqlAuditWriter(m_database)
                           .append({actor,
                                    QStringLiteral("refund.succeeded"),
                                    QStringLiteral("refund:") + refundNo,
                                    compact({{QStringLiteral("status"), core::refundStatusName(r.status)}}),
                                    compact(after),
                                    reason,
                                    {}});
        if (!audited)
            return audited.error();
        outcome = RefundSettlement::Settled;
        return {};
    });
    if (!done)
        return done.error();
    return outcome;
}

core::Result<RefundSettlement> SqlRefundStore::settleFailed(const QString &refundNo, const QString &why,
                                                            const QString &actor, qint64 nowMs)
{
    RefundSettlement outcome = RefundSettlement::Unknown;
    auto done = m_database.write([&](Session &session) -> core::Result<void> {
        outcome = RefundSettlement::Unknown;
        auto row = readRefund(session, refundNo);
        if (!row)
            return row.error();
        if (!row.value())
            return {};
        const RefundRecord r = *row.value();
        auto won = session.execAffected(
            QStringLiteral("UPDATE refunds SET status = 'failed', last_error = ?, finished_at = ?, updated_at = ? "
                           "WHERE refund_no = ? AND status IN ('requested', 'processing')"),
            {why.left(500), nowMs, nowMs, refundNo}, QStringLiteral("refund failed"));
        if (!won)
            return won.error();
        if (won.value() != 1) {
            outcome = RefundSettlement::AlreadySettled;
            return {};
        }
        QString orderStatus;
        if (r.ownPayment && !r.partial) { // a partial refund left the order PAID throughout
            // The money never left: the order is PAID again (docs/design.md: REFUNDING -> PAID).
            auto back = session.execAffected(
                QStringLiteral("UPDATE orders SET status = 'PAID', version = version + 1, "
                               "updated_at = ? WHERE order_no = ? AND status = 'REFUNDING'"),
                {nowMs, r.orderNo}, QStringLiteral("order REFUNDING -> PAID"));
            if (!back)
                return back.error();
            if (back.value() != 1)
                return Error::make(ErrorCode::Internal, QStringLiteral("order %1 is not REFUNDING").arg(r.orderNo));
            orderStatus = QStringLiteral("PAID");
        }
        auto marked = session.execAffected(QStringLiteral("UPDATE compensations SET status = 'failed', updated_at = ? "
                                                          "WHERE id = ? AND status = 'executed'"),
                                           {nowMs, r.compensationId}, QStringLiteral("refund compensation failed"));
        if (!marked)
            return marked.error();
        auto raised = upsertFinding(session,
                                    {QStringLiteral("refund_failed"), QStringLiteral("refund:") + refundNo, r.orderNo,
                                     r.payNo,
                                     QJsonObject{{QStringLiteral("refund_no"), refundNo},
                                                 {QStringLiteral("compensation_id"), r.compensationId},
                                                 {QStringLiteral("channel"), core::channelName(r.channel)},
                                                 {QStringLiteral("amount_fen"), r.amountFen},
                                                 {QStringLiteral("own_payment"), r.ownPayment},
                                                 {QStringLiteral("why"), why}}},
                                    nowMs);
        if (!raised)
            return raised.error();
        if (auto resolved = resolveAbnormal(session, refundNo, nowMs); !resolved)
            return resolved.error();
        QJsonObject after{{QStringLiteral("status"), QStringLiteral("failed")}, {QStringLiteral("why"), why}};
        if (!orderStatus.isEmpty())
            after.insert(QStringLiteral("order_status"), orderStatus);
        auto audited = SqlAuditWriter(m_database)
                           .append({actor,
                                    QStringLiteral("refund.failed"),
                                    QStringLiteral("refund:") + refundNo,
                                    compact({{QStringLiteral("status"), core::refundStatusName(r.status)}}),
                                    compact(after),
                                    why,
                                    {}});
        if (!audited)
            return audited.error();
        outcome = RefundSettlement::Settled;
        return {};
    });
    if (!done)
        return done.error();
    return outcome;
}

core::Result<QList<RefundRecord>> SqlRefundStore::select(const QString &where, const QVariantList &binds, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<RefundRecord>> {
        auto query = session.exec(
            QStringLiteral("SELECT %1 FROM refunds WHERE %2 LIMIT %3").arg(refundColumns(), where).arg(limit), binds,
            QStringLiteral("list refunds"));
        if (!query)
            return query.error();
        QList<RefundRecord> rows;
        while (query.value().next()) {
            auto row = refundFromRow(query.value());
            if (!row)
                return row.error();
            rows.append(row.value());
        }
        return rows;
    });
}

core::Result<RefundSettlement> SqlRefundStore::noteAbnormal(const QString &refundNo, const QString &why,
                                                            const QString &actor, qint64 nowMs)
{
    RefundSettlement outcome = RefundSettlement::Unknown;
    auto done = m_database.write([&](Session &session) -> core::Result<void> {
        outcome = RefundSettlement::Unknown;
        auto row = readRefund(session, refundNo);
        if (!row)
            return row.error();
        if (!row.value())
            return {};
        const RefundRecord r = *row.value();
        // Open refunds only (the platform accepted it, or it could not be abnormal). The
        // row is locked and its status read, not the UPDATE's count: MariaDB counts rows
        // changed, and a second ABNORMAL within the same millisecond changes nothing.
        auto locked = session.exec(QStringLiteral("SELECT status FROM refunds WHERE refund_no = ?")
                                       + forUpdate(session.dialect()),
                                   {refundNo}, QStringLiteral("lock refund"));
        if (!locked)
            return locked.error();
        const QString status = locked.value().next() ? locked.value().value(0).toString() : QString();
        if (status != u"requested" && status != u"processing") {
            outcome = RefundSettlement::AlreadySettled;
            return {};
        }
        auto open = session.execAffected(QStringLiteral("UPDATE refunds SET status = 'processing', last_error = ?, "
                                                        "updated_at = ? WHERE refund_no = ? "
                                                        "AND status IN ('requested', 'processing')"),
                                         {why.left(500), nowMs, refundNo}, QStringLiteral("refund abnormal"));
        if (!open)
            return open.error();
        bool raisedNow = false;
        auto raised = upsertFinding(
            session,
            {QStringLiteral("refund_abnormal"), QStringLiteral("refund:") + refundNo, r.orderNo, r.payNo,
             QJsonObject{{QStringLiteral("refund_no"), refundNo},
                         {QStringLiteral("compensation_id"), r.compensationId},
                         {QStringLiteral("channel"), core::channelName(r.channel)},
                         {QStringLiteral("amount_fen"), r.amountFen},
                         {QStringLiteral("own_payment"), r.ownPayment},
                         {QStringLiteral("why"), why},
                         {QStringLiteral("action"),
                          QStringLiteral("handle it at the platform; SUCCESS or CLOSED settles it")}}},
            nowMs, &raisedNow);
        if (!raised)
            return raised.error();
        if (raisedNow) {
            auto audited = SqlAuditWriter(m_database)
                               .append({actor,
                                        QStringLiteral("refund.abnormal"),
                                        QStringLiteral("refund:") + refundNo,
                                        compact({{QStringLiteral("status"), core::refundStatusName(r.status)}}),
                                        compact({{QStringLiteral("status"), QStringLiteral("processing")},
                                                 {QStringLiteral("why"), why}}),
                                        why,
                                        {}});
            if (!audited)
                return audited.error();
        }
        outcome = RefundSettlement::Abnormal;
        return {};
    });
    if (!done)
        return done.error();
    return outcome;
}

core::Result<QList<RefundRecord>> SqlRefundStore::unfinished(qint64 updatedBeforeMs, int limit)
{
    return select(QStringLiteral("status IN ('requested', 'processing') AND updated_at < ? ORDER BY updated_at, id"),
                  {updatedBeforeMs}, limit);
}

core::Result<QList<RefundRecord>> SqlRefundStore::ofOrder(const QString &orderNo)
{
    return select(QStringLiteral("order_no = ? ORDER BY id DESC"), {orderNo}, 100);
}

} // namespace payonce::sql
