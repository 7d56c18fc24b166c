#pragma once

#include "session.h"

#include "core/common/result.h"

#include <QJsonObject>
#include <QMap>
#include <QString>

namespace payonce::sql {

/// The stock ledger (stock_log): each order's own, net, append-only history of the stock it
/// took and gave back. An entry is keyed (order_no, sku_id, entry_key) — kStockTakeKey for
/// the paid transaction's deduction, "reversal:<compensation id>" for a restore_stock,
/// "refund:<refund_no>" for a refund — with its reason ("paid", "restore_stock",
/// "refund"). Nothing is updated or deleted, and every sum over an order is net, so a unit
/// given back once is never given back again.
inline const QString kStockTakeKey = QStringLiteral("take");

/// Why nothing of a SKU was given back (a compensation's result names it).
inline const QString kNothingTaken = QStringLiteral("nothing_taken"); ///< the order holds none of it
inline const QString kStillOwed = QStringLiteral("owed");             ///< it holds only what it owes

/// What a give-back did, per SKU: the quantity returned to the shelf, or why none was.
struct StockGiveBack {
    QJsonObject restored; ///< sku_id → qty given back by this call
    QJsonObject refused;  ///< sku_id → kNothingTaken | kStillOwed
};

/// Locks the order's row for the rest of the caller's transaction, so that give-backs,
/// compensations and settlements of one order never interleave between their read of the
/// ledger and their write. NotFound when there is no such order.
core::Result<void> lockOrder(Session &session, const QString &orderNo);

/// What the order holds of each SKU: the net of all its entries.
core::Result<QMap<QString, qint64>> netStockOf(Session &session, const QString &orderNo);

/// Gives back, per SKU, `wanted` but never more than the order holds: one entry under
/// `entryKey` with `reason` and the quantity returned to skus. A SKU the order holds none
/// of is refused (kNothingTaken). The same entryKey again writes and gives nothing (the
/// entry exists). The caller has locked the order (lockOrder) in this transaction.
core::Result<StockGiveBack> giveBackStock(Session &session, const QString &orderNo, const QMap<QString, qint64> &wanted,
                                          const QString &entryKey, const QString &reason, qint64 fence, qint64 nowMs);

} // namespace payonce::sql
