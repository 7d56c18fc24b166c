#pragma once

#include "core/common/result.h"

#include <QString>

namespace payonce::bench {

/// A busy history written straight into the run's database, so that the callback path can
/// be measured against tables of a production size instead of nearly empty ones.
struct HistoryPreloadOptions {
    QString databaseUrl;
    qint64 deliveries = 0; ///< callback_deliveries rows, about deliveries / paidOrders per order
    qint64 paidOrders = 0; ///< PAID orders with everything a settled payment leaves behind
    int days = 10;         ///< spread over the last `days` days (inside every retention period)
    qint64 nowMs = 0;
    QString prefix; ///< the preloaded orders' numbers start with it
};

/// What the tables hold once the history is in (the run's own rows included).
struct PreloadedCounts {
    qint64 deliveries = 0; ///< callback_deliveries rows
    qint64 paidOrders = 0; ///< orders PAID
};

/// Writes the history with set-based SQL (PostgreSQL's generate_series, MariaDB's sequence
/// engine, a recursive CTE on SQLite) in transactions of kPreloadChunk rows, then refreshes
/// the planner's statistics (a table that size in production has them), printing progress
/// on stderr. Each paid order gets its item, paid payment record, processed callback-log
/// row, stock, coupon and points entries and its delivered outbox event; the first
/// delivery of each order keeps a raw body and headers of a real notification's size, the
/// later ones (duplicates) none, as the agent stores them. Counts the rows afterwards.
core::Result<PreloadedCounts> preloadHistory(const HistoryPreloadOptions &options);

/// One day of deliveries past the deliveries' retention: `count` rows received between
/// `receivedFromMs` and half a day later, with ids below every other row's (the oldest
/// rows of a table that grew in time order come first in its key).
core::Result<void> preloadAgedDeliveries(const QString &databaseUrl, qint64 count, qint64 receivedFromMs);

} // namespace payonce::bench
