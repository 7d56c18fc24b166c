#pragma once

#include "loadclient.h"

#include <QByteArray>
#include <QString>

namespace payonce::bench {

/// The ceiling of the callback path's storage work: for `count` fresh orders (made here
/// first, untimed, each PAYING with a pending payment record, as a confirm leaves it),
/// `threads` threads issue exactly the statements the agent issues for one first-time
/// notification — through the agent's own SQL adapters (payonce::sql's
/// SqlCallbackStore over sql::Database, the same Qt Sql driver and transactions):
/// findOrderForPayment, appendDelivery (headers and body of a real notification),
/// insertAccepted, then one transaction with markPaid, takeStock, insertStockLog,
/// insertCoupon, insertPoints, insertOutbox, markPaymentRecordPaid, markProcessed,
/// and decideDelivery. No HTTP, no verification, no lock: what the database allows.
struct DirectSqlOptions {
    QString databaseUrl;
    int threads = 64;
    qint64 count = 0;
    int skus = 1000;          ///< orders spread over this many SKUs
    QString prefix;           ///< order numbers and pay_nos start with it (unique per run)
    QByteArray sampleRequest; ///< a notification's request bytes, stored as the delivery
};

/// A failed preparation is reported in failureSamples with completed = 0.
LoadResult runDirectSqlLimit(const DirectSqlOptions &options);

} // namespace payonce::bench
