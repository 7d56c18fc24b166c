#pragma once

#include "jsontablemodel.h"

#include <QStringList>

namespace payonce::console {

/// GET /api/v1/audit: every action anyone took, newest first — when, who (the token's
/// name, or "system:…" for the agent's own parts), what, on what, why, the state before
/// and after, and the trace id that ties it to the agent's log.
class AuditModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit AuditModel(QObject *parent = nullptr);

    /// The distinct values of a field over the rows, sorted (the filters offer them).
    QStringList distinctValues(const QString &key) const;
};

} // namespace payonce::console
