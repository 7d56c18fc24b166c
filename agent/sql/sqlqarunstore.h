#pragma once

#include "database.h"

#include "core/ports/qarunstore.h"

namespace payonce::sql {

/// core::QaRunStore on qa_runs, and the invariant report as a handful of COUNT queries
/// over one scenario's orders (order_no LIKE '<prefix>%'; prefixes are [a-z0-9-], no
/// LIKE wildcards) — the same SQL on the three dialects. A running row whose lease_until is
/// past the Database's clock is read as abandoned (finished_at = lease_until) whether or
/// not abandonExpired() has written it down yet. Thread-safe.
class SqlQaRunStore final : public core::QaRunStore {
public:
    explicit SqlQaRunStore(Database &database) : m_database(database) {}

    core::Result<void> create(const core::QaRun &run) override;
    core::Result<void> saveProgress(const QString &scenarioId, const QString &progress) override;
    core::Result<bool> finish(const QString &scenarioId, const QString &agentId, const QString &status,
                              const QString &report, qint64 nowMs) override;
    core::Result<bool> renewLease(const QString &scenarioId, const QString &agentId, qint64 nowMs,
                                  qint64 leaseUntil) override;
    core::Result<QList<core::QaRun>> abandonExpired(qint64 nowMs) override;
    core::Result<QList<core::QaRun>> list(int limit) override;
    core::Result<std::optional<core::QaRun>> find(const QString &scenarioId) override;
    core::Result<QList<core::QaRun>> running() override;
    core::Result<core::ScenarioReport> report(const QString &orderPrefix) override;
    core::Result<qint64> unpaidOrders(const QString &orderPrefix) override;
    core::Result<qint64> redeliverOutboxEvents(const QString &orderPrefix, qint64 nowMs) override;
    core::Result<qint64> deliveredOutboxEvents(const QString &orderPrefix) override;

private:
    core::Result<QList<core::QaRun>> select(const QString &where, const QVariantList &binds, int limit);
    core::Result<qint64> count(const QString &sql, const QString &orderPrefix);

    Database &m_database;
};

} // namespace payonce::sql
