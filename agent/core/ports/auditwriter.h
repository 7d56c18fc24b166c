#pragma once

#include "core/common/result.h"

#include <QDateTime>
#include <QString>

namespace payonce::core {

/// One line of the append-only audit trail: who did what to which thing, why, and what it
/// looked like before and after (JSON text, may be empty).
struct AuditEntry {
    QString actor;  ///< a token's name, or "system:<component>"
    QString action; ///< e.g. "breaker.force_open", "compensation.approve"
    QString target; ///< e.g. "order:ORD001", "breaker:gateway.wechat"
    QString before;
    QString after;
    QString reason;
    QString traceId;
};

/// Appends to the audit trail. Append-only by contract and, in the database, by trigger:
/// nothing offered here updates or deletes. Thread-safe; each call is its own durable
/// write unless the caller's transaction is open on the same thread, in which case the
/// entry commits or rolls back with it.
class AuditWriter {
public:
    virtual ~AuditWriter() = default;
    virtual Result<qint64> append(const AuditEntry &entry) = 0;
};

} // namespace payonce::core
