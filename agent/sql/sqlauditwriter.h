#pragma once

#include "database.h"

#include "core/ports/auditwriter.h"

namespace payonce::sql {

/// core::AuditWriter on the audit_log table. INSERT only; the table's triggers refuse
/// UPDATE and DELETE on all three dialects. A call made inside a write() on the same
/// thread joins that transaction (the entry commits or rolls back with the action).
class SqlAuditWriter final : public core::AuditWriter {
public:
    explicit SqlAuditWriter(Database &database) : m_database(database) {}
    core::Result<qint64> append(const core::AuditEntry &entry) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
