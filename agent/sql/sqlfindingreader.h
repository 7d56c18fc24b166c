#pragma once

#include "database.h"

#include "core/ports/findingreader.h"

namespace payonce::sql {

/// core::FindingReader on the findings table (sqlfindings.h's listing). Thread-safe.
class SqlFindingReader final : public core::FindingReader {
public:
    explicit SqlFindingReader(Database &database) : m_database(database) {}
    core::Result<QList<core::StoredFinding>> list(const core::FindingQuery &query) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
