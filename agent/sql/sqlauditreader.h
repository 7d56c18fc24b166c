#pragma once

#include "database.h"

#include "core/ports/auditreader.h"

namespace payonce::sql {

/// core::AuditReader on the audit_log table (SELECT only), newest first: by `at`, then by
/// id for lines written in the same millisecond. Thread-safe.
class SqlAuditReader final : public core::AuditReader {
public:
    explicit SqlAuditReader(Database &database) : m_database(database) {}
    core::Result<QList<core::AuditRecord>> list(const core::AuditQuery &query) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
