#include "sqlqarunstore.h"

#include "dialectsql.h"

#include <QSqlQuery>

namespace payonce::sql {

namespace {

const QString kColumns = QStringLiteral(
    "scenario_id, kind, params, status, progress, report, started_by, started_at, finished_at, agent_id, lease_until");
const QString kRunning = QStringLiteral("running");
const QString kAbandoned = QStringLiteral("abandoned");

// What each PAID order is owed (docs/design.md, "Callback path"): one stock row per item, one
// coupon when it has a template, one points grant when it has points.
// The deductions (not the give-backs) of the order's stock ledger.
const QString kStockRows = QStringLiteral(
    "(SELECT COUNT(*) FROM stock_log s WHERE s.order_no = o.order_no AND s.qty > 0)");
const QString kItems = QStringLiteral("(SELECT COUNT(*) FROM order_items i WHERE i.order_no = o.order_no)");
const QString kCoupons = QStringLiteral("(SELECT COUNT(*) FROM user_coupon c WHERE c.order_no = o.order_no)");
const QString kCouponsOwed = QStringLiteral(
    "(CASE WHEN COALESCE(o.reward_coupon_template, '') = '' THEN 0 ELSE 1 END)");
const QString kGrants = QStringLiteral(
    "(SELECT COUNT(*) FROM point_log p WHERE p.order_no = o.order_no AND p.delta > 0)");
const QString kGrantsOwed = QStringLiteral("(CASE WHEN o.reward_points > 0 THEN 1 ELSE 0 END)");

QString like(const QString &prefix)
{
    return prefix + QLatin1Char('%');
}

} // namespace

core::Result<void> SqlQaRunStore::create(const core::QaRun &run)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        auto inserted = session.exec(
            QStringLiteral("INSERT INTO qa_runs (%1) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").arg(kColumns),
            {run.scenarioId, run.kind, run.params, run.status, run.progress.isEmpty() ? QVariant() : run.progress,
             run.report.isEmpty() ? QVariant() : run.report, run.startedBy, run.startedAt,
             run.finishedAt > 0 ? QVariant(run.finishedAt) : QVariant(), run.agentId, run.leaseUntil},
            QStringLiteral("insert qa run"));
        if (!inserted)
            return inserted.error();
        return {};
    });
}

core::Result<void> SqlQaRunStore::saveProgress(const QString &scenarioId, const QString &progress)
{
    return m_database.write([&](Session &session) -> core::Result<void> {
        auto updated = session.exec(QStringLiteral("UPDATE qa_runs SET progress = ? WHERE scenario_id = ?"),
                                    {progress, scenarioId}, QStringLiteral("qa progress"));
        if (!updated)
            return updated.error();
        return {};
    });
}

core::Result<bool> SqlQaRunStore::finish(const QString &scenarioId, const QString &agentId, const QString &status,
                                         const QString &report, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        auto updated = session.execAffected(
            QStringLiteral("UPDATE qa_runs SET status = ?, report = ?, finished_at = ? WHERE scenario_id = ? "
                           "AND agent_id = ? AND status = 'running' AND lease_until >= ?"),
            {status, report.isEmpty() ? QVariant() : report, nowMs, scenarioId, agentId, nowMs},
            QStringLiteral("qa finish"));
        if (!updated)
            return updated.error();
        return updated.value() == 1;
    });
}

core::Result<bool> SqlQaRunStore::renewLease(const QString &scenarioId, const QString &agentId, qint64 nowMs,
                                             qint64 leaseUntil)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        // MariaDB counts changed rows: a renewal to the same lease_until (two in one
        // millisecond) would count 0, so the row is matched by a read in the same
        // transaction first.
        auto held = session.exec(
            QStringLiteral("SELECT lease_until FROM qa_runs WHERE scenario_id = ? AND agent_id = ? "
                           "AND status = 'running' AND lease_until >= ?")
                + forUpdate(session.dialect()),
            {scenarioId, agentId, nowMs}, QStringLiteral("qa lease held"));
        if (!held)
            return held.error();
        if (!held.value().next())
            return false;
        auto renewed = session.exec(QStringLiteral("UPDATE qa_runs SET lease_until = ? WHERE scenario_id = ?"),
                                    {std::max(leaseUntil, held.value().value(0).toLongLong()), scenarioId},
                                    QStringLiteral("qa lease renewal"));
        if (!renewed)
            return renewed.error();
        return true;
    });
}

core::Result<QList<core::QaRun>> SqlQaRunStore::abandonExpired(qint64 nowMs)
{
    auto expired = select(QStringLiteral("WHERE status = 'running' AND lease_until < ?"), {nowMs}, 100);
    if (!expired)
        return expired;
    QList<core::QaRun> abandoned;
    for (core::QaRun run : std::as_const(expired.value())) {
        auto marked = m_database.write([&](Session &session) -> core::Result<int> {
            return session.execAffected(
                QStringLiteral("UPDATE qa_runs SET status = 'abandoned', finished_at = lease_until "
                               "WHERE scenario_id = ? AND status = 'running' AND lease_until < ?"),
                {run.scenarioId, nowMs}, QStringLiteral("qa abandon"));
        });
        if (!marked)
            return marked.error();
        if (marked.value() == 1) { // another agent may have written it down first
            run.status = kAbandoned;
            run.finishedAt = run.leaseUntil;
            abandoned.append(run);
        }
    }
    return abandoned;
}

core::Result<QList<core::QaRun>> SqlQaRunStore::select(const QString &where, const QVariantList &binds, int limit)
{
    return m_database.read([&](Session &session) -> core::Result<QList<core::QaRun>> {
        auto query = session.exec(
            QStringLiteral("SELECT %1 FROM qa_runs %2 ORDER BY id DESC LIMIT %3").arg(kColumns, where).arg(limit),
            binds, QStringLiteral("select qa runs"));
        if (!query)
            return query.error();
        QList<core::QaRun> runs;
        QSqlQuery &q = query.value();
        const qint64 now = session.nowMs();
        while (q.next()) {
            core::QaRun run{
                q.value(0).toString(), q.value(1).toString(),   q.value(2).toString(),
                q.value(3).toString(), q.value(4).toString(),   q.value(5).toString(),
                q.value(6).toString(), q.value(7).toLongLong(), q.value(8).isNull() ? 0 : q.value(8).toLongLong(),
                q.value(9).toString(), q.value(10).toLongLong()};
            if (run.status == kRunning && run.leaseUntil < now) { // its agent died; not yet written down
                run.status = kAbandoned;
                run.finishedAt = run.leaseUntil;
            }
            runs.append(run);
        }
        return runs;
    });
}

core::Result<QList<core::QaRun>> SqlQaRunStore::list(int limit)
{
    return select({}, {}, limit);
}

core::Result<std::optional<core::QaRun>> SqlQaRunStore::find(const QString &scenarioId)
{
    auto found = select(QStringLiteral("WHERE scenario_id = ?"), {scenarioId}, 1);
    if (!found)
        return found.error();
    if (found.value().isEmpty())
        return std::optional<core::QaRun>();
    return std::optional<core::QaRun>(found.value().first());
}

core::Result<QList<core::QaRun>> SqlQaRunStore::running()
{
    auto runs = select(QStringLiteral("WHERE status = 'running'"), {}, 100);
    if (!runs)
        return runs;
    QList<core::QaRun> live;
    for (const core::QaRun &run : std::as_const(runs.value())) {
        if (run.status == kRunning)
            live.append(run);
    }
    return live;
}

core::Result<qint64> SqlQaRunStore::count(const QString &sql, const QString &orderPrefix)
{
    return m_database.read([&](Session &session) -> core::Result<qint64> {
        auto query = session.exec(sql, {like(orderPrefix)}, QStringLiteral("qa count"));
        if (!query)
            return query.error();
        return query.value().next() ? query.value().value(0).toLongLong() : 0;
    });
}

core::Result<core::ScenarioReport> SqlQaRunStore::report(const QString &orderPrefix)
{
    const QString ofScenario = QStringLiteral("SELECT COUNT(*) FROM orders o WHERE o.order_no LIKE ?");
    const QList<std::pair<qint64 core::ScenarioReport::*, QString>> counts{
        {&core::ScenarioReport::orders, ofScenario},
        {&core::ScenarioReport::deliveries,
         QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE order_no LIKE ?")},
        // PAID, by exactly one successful payment record.
        {&core::ScenarioReport::paidOnce,
         ofScenario
             + QStringLiteral(" AND o.status = 'PAID' AND (SELECT COUNT(*) FROM payment_records r "
                              "WHERE r.order_no = o.order_no AND r.status = 'paid') = 1")},
        {&core::ScenarioReport::doubleEffects,
         ofScenario
             + QStringLiteral(" AND (%1 > %2 OR %3 > %4 OR %5 > %6)")
                   .arg(kStockRows, kItems, kCoupons, kCouponsOwed, kGrants, kGrantsOwed)},
        {&core::ScenarioReport::missingEffects,
         ofScenario
             + QStringLiteral(" AND o.status = 'PAID' AND (%1 < %2 OR %3 < %4 OR %5 < %6)")
                   .arg(kStockRows, kItems, kCoupons, kCouponsOwed, kGrants, kGrantsOwed)},
        // Every scenario order was paid at the platform (a run that could not pay one
        // ends with status error), so any order not PAID is a payment lost.
        {&core::ScenarioReport::lost, ofScenario + QStringLiteral(" AND o.status <> 'PAID'")},
        {&core::ScenarioReport::outboxPending,
         QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.paid' AND status = 'pending' "
                        "AND aggregate_id LIKE ?")},
    };
    core::ScenarioReport report;
    for (const auto &[field, sql] : counts) {
        auto counted = count(sql, orderPrefix);
        if (!counted)
            return counted.error();
        report.*field = counted.value();
    }
    return m_database.read([&](Session &session) -> core::Result<core::ScenarioReport> {
        auto query = session.exec(QStringLiteral("SELECT layer, COUNT(*) FROM callback_deliveries "
                                                 "WHERE order_no LIKE ? GROUP BY layer"),
                                  {like(orderPrefix)}, QStringLiteral("qa deliveries by layer"));
        if (!query)
            return query.error();
        while (query.value().next())
            report.byLayer.insert(query.value().value(0).toString(), query.value().value(1).toLongLong());
        return report;
    });
}

core::Result<qint64> SqlQaRunStore::unpaidOrders(const QString &orderPrefix)
{
    return count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no LIKE ? AND status <> 'PAID'"), orderPrefix);
}

core::Result<qint64> SqlQaRunStore::deliveredOutboxEvents(const QString &orderPrefix)
{
    return count(QStringLiteral("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.paid' "
                                "AND status = 'delivered' AND aggregate_id LIKE ?"),
                 orderPrefix);
}

core::Result<qint64> SqlQaRunStore::redeliverOutboxEvents(const QString &orderPrefix, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<qint64> {
        auto changed = session.execAffected(
            QStringLiteral("UPDATE outbox SET status = 'pending', next_attempt_at = ?, delivered_at = NULL, "
                           "claimed_by = NULL, claimed_until = NULL WHERE event_type = 'order.paid' "
                           "AND status = 'delivered' AND aggregate_id LIKE ?"),
            {nowMs, like(orderPrefix)}, QStringLiteral("qa outbox redelivery"));
        if (!changed)
            return changed.error();
        return qint64(changed.value());
    });
}

} // namespace payonce::sql
