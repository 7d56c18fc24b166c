#include "sqlauditwriter.h"

namespace payonce::sql {

namespace {
QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}
} // namespace

core::Result<qint64> SqlAuditWriter::append(const core::AuditEntry &entry)
{
    if (entry.actor.isEmpty() || entry.action.isEmpty() || entry.target.isEmpty() || entry.reason.isEmpty()) {
        return core::Error::make(core::ErrorCode::InvalidInput,
                                 QStringLiteral("an audit entry needs actor, action, target and reason"));
    }
    return m_database.write([&](Session &session) {
        return session.execInsertReturningId(
            QStringLiteral("INSERT INTO audit_log (at, actor, action, target, before_state, after_state, reason, "
                           "trace_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
            {session.nowMs(), entry.actor, entry.action, entry.target, textOrNull(entry.before),
             textOrNull(entry.after), entry.reason, textOrNull(entry.traceId)},
            QStringLiteral("append audit_log"));
    });
}

} // namespace payonce::sql
