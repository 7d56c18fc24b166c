#pragma once

#include "core/common/channel.h"
#include "core/common/result.h"

#include <QList>
#include <QString>

namespace payonce::core {

struct AuditEntry;

/// A PENDING order whose last change is older than the close timeout, with every payment
/// record whose trade may exist at a platform (payment_records not `paid`/`closed`:
/// `failed` ones included — a create that timed out may have reached the platform).
struct ExpiredOrder {
    struct Trade {
        QString paymentNo;
        Channel channel = Channel::WeChat;
        QString status; ///< "creating" | "pending" | "failed"
    };
    QString orderNo;
    qint64 amountFen = 0;
    qint64 version = 0;           ///< orders.version as listed: the close CAS expects it unchanged
    qint64 pendingSinceMs = 0;    ///< orders.updated_at
    QList<Trade> trades;          ///< may be empty (never confirmed)
    bool callbackWaiting = false; ///< an `accepted` pay_callback_log row: paid, not yet processed
};

/// Where the listing of expired orders stopped: the last (updated_at, order_no) seen.
struct ExpiredOrderCursor {
    qint64 updatedAtMs = -1; ///< -1: from the start
    QString orderNo;
};

/// What the order closer reads and writes. Thread-safe; work runs on the calling thread.
class OrderCloseStore {
public:
    virtual ~OrderCloseStore() = default;
    /// PENDING orders with updated_at < updatedBeforeMs after `after` in (updated_at,
    /// order_no) order — oldest first — at most `limit`, each with its open trades.
    virtual Result<QList<ExpiredOrder>> expiredPending(qint64 updatedBeforeMs, const ExpiredOrderCursor &after,
                                                       int limit) = 0;
    /// One transaction: the order goes PENDING → CLOSED by a CAS on its status AND the
    /// listed version (closed_at set, version + 1) provided no `accepted` callback row waits
    /// for it; each of order.trades still open becomes `closed`; `audit` is appended. false:
    /// the order moved on since it was listed (another closer, a payment, a confirm) or its
    /// records did — nothing is written. Safe to call from many closers at once: exactly one
    /// closes the order and writes the audit row.
    virtual Result<bool> closeExpired(const ExpiredOrder &order, const AuditEntry &audit, qint64 nowMs) = 0;
};

} // namespace payonce::core
