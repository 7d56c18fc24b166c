#pragma once

#include "core/ports/retentionstore.h"

#include <array>
#include <atomic>
#include <cstddef>

namespace payonce::core {

struct RetentionOptions {
    /// Days each table keeps its rows, by RetainedTable; 0: for ever.
    std::array<int, allRetainedTables.size()> days{};
    int batchSize = 1000;
    /// Batches one run deletes at most per table: a run stays short, the next one goes on.
    int maxBatchesPerRun = 50;
};

/// Deletes what has outlived its retention in small batches, each its own transaction, so
/// that no statement holds the tables the callback path writes for long. Off the hot path:
/// the agent runs it on a timer, on a pool thread. Thread-safe; runs do not overlap (a run
/// asked for while another is going returns at once).
class RetentionPruner {
public:
    RetentionPruner(RetentionStore &store, RetentionOptions options);

    struct Report {
        std::array<qint64, allRetainedTables.size()> deleted{};
        bool skipped = false; ///< another run was going
        bool complete = true; ///< false: a table has more to delete (batch limit) or a batch failed
    };
    Report runOnce(qint64 nowMs);

    /// Rows deleted since start, by table.
    qint64 deleted(RetainedTable table) const { return m_deleted[std::size_t(table)].load(); }

private:
    RetentionStore &m_store;
    const RetentionOptions m_options;
    std::atomic<bool> m_running{false};
    std::array<std::atomic<qint64>, allRetainedTables.size()> m_deleted{};
};

} // namespace payonce::core
