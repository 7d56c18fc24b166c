#pragma once

#include "core/common/result.h"

#include <QString>

#include <functional>
#include <optional>

namespace payonce::core {

/// The callbacks mode (the incident switch, docs/openapi.yaml GET/PUT /api/v1/mode): Normal runs the
/// whole pipeline; AcceptOnly stops after the durable log row and answers SUCCESS, and the
/// worker finishes the rows when the mode is Normal again.
enum class CallbackMode {
    Normal,
    AcceptOnly
};

/// "normal" | "accept_only"
inline QString callbackModeName(CallbackMode mode)
{
    return mode == CallbackMode::AcceptOnly ? QStringLiteral("accept_only") : QStringLiteral("normal");
}
inline std::optional<CallbackMode> callbackModeFromName(QStringView name)
{
    if (name == QLatin1String("normal"))
        return CallbackMode::Normal;
    if (name == QLatin1String("accept_only"))
        return CallbackMode::AcceptOnly;
    return std::nullopt;
}

struct CallbackModeSetting {
    CallbackMode mode = CallbackMode::Normal;
    QString actor; ///< who set it; empty when never set
    QString reason;
    qint64 changedAtMs = 0;
    qint64 version = 0; ///< 0 when never set
};

/// The callbacks mode, shared by every agent (the database's `settings` table, row
/// "callbacks.mode"). A mode never set is Normal. setMode() replaces the setting
/// (idempotent, safe to retry); the caller audits it. Thread-safe.
class CallbackModeStore {
public:
    virtual ~CallbackModeStore() = default;
    virtual Result<CallbackModeSetting> mode() = 0;
    /// `inTransaction`, when given, runs inside the write that sets the mode (the route's
    /// audit row: an AuditWriter on this thread joins it), so the change and its audit
    /// commit together or not at all.
    virtual Result<void> setMode(CallbackMode mode, const QString &actor, const QString &reason, qint64 nowMs,
                                 const std::function<Result<void>()> &inTransaction = {}) = 0;
    /// How many callback log rows are `accepted` (waiting for the worker): GET /api/v1/mode's
    /// accepted_waiting.
    virtual Result<qint64> acceptedWaiting() = 0;
};

} // namespace payonce::core
