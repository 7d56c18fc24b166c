#pragma once

#include "core/common/result.h"

#include <QList>
#include <QPair>
#include <QString>

namespace payonce::core {

/// Counts of durable work read for the metrics at scrape time.
struct OperationalCounts {
    qint64 outboxPending = 0;
    qint64 outboxDead = 0;
    qint64 outboxOldestPendingAgeMs = 0;     ///< how long the oldest pending event has waited; 0: none
    qint64 callbacksAccepted = 0;            ///< log rows `accepted`, not yet settled (accept-only's backlog)
    qint64 callbacksOldestAcceptedAgeMs = 0; ///< how long the oldest of them has waited; 0: none
    QList<QPair<QString, qint64>> compensationsByStatus; ///< every status, zeros included
    QList<QPair<QString, qint64>> openFindingsByKind;    ///< every kind, zeros included
};

/// Reads OperationalCounts from storage: a few COUNT(*) … GROUP BY statements in
/// autocommit, nothing locked. Safe to call any time from any worker thread; a failure
/// (database down) is returned, and the scrape leaves those families empty.
class OperationalCountsReader {
public:
    virtual ~OperationalCountsReader() = default;
    virtual Result<OperationalCounts> read() = 0;
};

} // namespace payonce::core
