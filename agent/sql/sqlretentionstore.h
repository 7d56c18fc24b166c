#pragma once

#include "database.h"

#include "core/ports/retentionstore.h"

namespace payonce::sql {

/// Retention's deletes, one batch a transaction, oldest rows first by the time column the
/// cutoff applies to (received_at, created_at, delivered_at, finished_at), whose index
/// finds them without reading the young rows. PostgreSQL and SQLite delete `WHERE id IN
/// (SELECT id … ORDER BY <time> LIMIT n)`; MariaDB, which allows neither LIMIT in such a
/// subquery nor a subquery on the table being deleted from, `DELETE … ORDER BY <time>
/// LIMIT n`. The conditions are each
/// table's own (RetainedTable): an `accepted` row and its delivery, a pending or dead
/// event and a running QA run are never deleted, whatever their age. Thread-safe.
class SqlRetentionStore final : public core::RetentionStore {
public:
    explicit SqlRetentionStore(Database &database) : m_database(database) {}

    core::Result<int> pruneBatch(core::RetainedTable table, qint64 cutoffMs, int limit) override;

    /// One batch's DELETE of `table` on `dialect`, its one '?' the cutoff (for the plan
    /// tests: a batch must walk the table's time index, not the table).
    static QString batchStatement(Dialect dialect, core::RetainedTable table, int limit);

private:
    Database &m_database;
};

} // namespace payonce::sql
