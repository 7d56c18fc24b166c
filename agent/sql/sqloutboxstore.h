#pragma once

#include "core/ports/outboxstore.h"

#include <mutex>

namespace payonce::sql {

class Database;

/// The outbox table in Qt Sql, all three dialects. claim() is one short write transaction:
/// PostgreSQL and MariaDB SELECT the due ids FOR UPDATE SKIP LOCKED, then UPDATE their
/// claim (MariaDB has no UPDATE … RETURNING and refuses the IN (SELECT … SKIP LOCKED) form,
/// error 1235); SQLite runs the same SELECT and UPDATE in BEGIN IMMEDIATE, as the single
/// writer. Thread-safe (Database gives each thread its own connection).
///
/// On SQLite the dispatchers of this process also take turns on a mutex around their
/// writes: SQLite's busy handler polls (sleeps of up to 100 ms), and with three
/// dispatchers writing in a loop one of them could wait past its claim lease (measured in
/// tst_outbox: a batch report refused after a > 1 s wait); a blocked mutex hands over at once.
class SqlOutboxStore final : public core::OutboxStore {
public:
    explicit SqlOutboxStore(Database &database) : m_database(database) {}

    core::Result<QList<core::OutboxEvent>> claim(const QString &dispatcherId, int limit, qint64 nowMs,
                                                 qint64 claimedUntilMs) override;
    core::Result<int> complete(const QString &dispatcherId, const QList<core::OutboxOutcome> &outcomes,
                               qint64 nowMs) override;
    core::Result<QList<core::OutboxEvent>> list(std::optional<core::OutboxStatus> status, int limit) override;
    using core::OutboxStore::redrive;
    core::Result<core::OutboxEvent> redrive(qint64 id, qint64 nowMs, const RedriveHook &hook) override;

private:
    std::unique_lock<std::mutex> sqliteTurn();

    Database &m_database;
    std::mutex m_sqliteWriter;
};

} // namespace payonce::sql
