#pragma once

#include "loadclient.h"

#include <QString>

namespace payonce::bench {

/// The honest floor of a unique callback: the least work any implementation must do to
/// pay an order once, written by hand against the database with nothing of payonce's in
/// between. For `count` orders made first (untimed: PAYING with a pending payment record,
/// spread over `skus` SKUs), `threads` threads each hold one connection of the same Qt Sql
/// driver with its statements prepared once, and pay one order per transaction:
///   BEGIN; INSERT the callback log row (processed); UPDATE orders … WHERE status IN
///   ('PENDING','PAYING') (the CAS); UPDATE the payment record; INSERT user_coupon,
///   point_log, outbox, stock_log; UPDATE skus (the hot row last); COMMIT.
/// No delivery row, no verification, no lock, no retries beyond a busy database's.
struct PaidFloorOptions {
    QString databaseUrl;
    int threads = 64;
    qint64 count = 0;
    int skus = 1000;
    QString prefix; ///< order numbers, SKUs and pay_nos start with it (unique per run)
};

/// A failed preparation is reported in failureSamples with completed = 0.
LoadResult runPaidTransactionFloor(const PaidFloorOptions &options);

} // namespace payonce::bench
