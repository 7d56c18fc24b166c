#pragma once

#include "core/common/result.h"
#include "core/settlement/finding.h"

#include <QList>
#include <QString>

namespace payonce::core {

/// Which findings to list (GET /api/v1/findings). Empty strings do not filter.
struct FindingQuery {
    QString status; ///< "open" | "resolved" | empty
    QString kind;   ///< one of Finding::kind's values | empty
    int limit = 100;
};

/// Reads the findings the callback path and the patrol raised, most recently seen first.
/// Read-only; thread-safe; work runs on the calling thread.
class FindingReader {
public:
    virtual ~FindingReader() = default;
    virtual Result<QList<StoredFinding>> list(const FindingQuery &query) = 0;
};

} // namespace payonce::core
