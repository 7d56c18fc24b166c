#pragma once

#include "database.h"

#include "core/ports/operationalcounts.h"

namespace payonce::sql {

/// core::OperationalCountsReader on the outbox, compensations and findings tables: three
/// grouped counts in autocommit (indexed by status). Thread-safe.
class SqlOperationalCounts final : public core::OperationalCountsReader {
public:
    explicit SqlOperationalCounts(Database &database) : m_database(database) {}
    core::Result<core::OperationalCounts> read() override;

private:
    Database &m_database;
};

} // namespace payonce::sql
