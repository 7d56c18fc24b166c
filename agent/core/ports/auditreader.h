#pragma once

#include "core/common/result.h"
#include "core/ports/auditwriter.h"

#include <QList>
#include <QString>

#include <optional>

namespace payonce::core {

/// One stored line of the audit trail.
struct AuditRecord {
    qint64 id = 0;
    qint64 atMs = 0; ///< when it was written, UTC epoch ms
    AuditEntry entry;
};

/// Which lines to read (GET /api/v1/audit). Empty strings do not filter; the others must
/// match exactly.
struct AuditQuery {
    std::optional<qint64> sinceMs; ///< at or after this
    QString actor;
    QString action;
    QString target;
    int limit = 100;
};

/// Reads the append-only audit trail, newest first. Read-only; thread-safe; work runs on
/// the calling thread.
class AuditReader {
public:
    virtual ~AuditReader() = default;
    virtual Result<QList<AuditRecord>> list(const AuditQuery &query) = 0;
};

} // namespace payonce::core
