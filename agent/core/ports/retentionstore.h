#pragma once

#include "core/common/result.h"

#include <QString>

#include <array>

namespace payonce::core {

/// What retention may delete, each after its own number of days (docs/design.md,
/// "Retention"). Money and its history — orders, payments, refunds, effects, findings,
/// compensations, the audit log — are never among them.
enum class RetainedTable {
    Deliveries,      ///< callback_deliveries (raw bodies): not one still an `accepted` row's delivery
    CallbackLog,     ///< pay_callback_log rows `processed` (never `accepted`)
    OutboxDelivered, ///< outbox events delivered (never pending or dead)
    QaRuns,          ///< qa_runs that ended (never running)
};

inline constexpr std::array allRetainedTables{RetainedTable::Deliveries, RetainedTable::CallbackLog,
                                              RetainedTable::OutboxDelivered, RetainedTable::QaRuns};

/// The table's name as metrics and logs say it ("deliveries", "callback_log", …).
QString retainedTableName(RetainedTable table);

class RetentionStore {
public:
    virtual ~RetentionStore() = default;
    /// Deletes at most `limit` rows of `table` older than `cutoffMs` (oldest first), in one
    /// short transaction of its own; the number deleted.
    virtual Result<int> pruneBatch(RetainedTable table, qint64 cutoffMs, int limit) = 0;
};

} // namespace payonce::core
