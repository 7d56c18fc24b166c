#pragma once

#include "core/common/result.h"
#include "core/confirm/paymentrecord.h"
#include "core/orders/orderstatus.h"
#include "core/orders/transitionoutcome.h"

#include <QString>

#include <functional>
#include <optional>

namespace payonce::core {

/// The order as the payment path needs it.
struct OrderSnapshot {
    QString orderNo;
    qint64 userId = 0;
    qint64 amountFen = 0;
    OrderStatus status = OrderStatus::Pending;
};

/// The statements of one confirm transaction. Valid only inside
/// PaymentStore::inTransaction(); everything commits or rolls back together.
class ConfirmTransaction {
public:
    virtual ~ConfirmTransaction() = default;

    virtual Result<std::optional<OrderSnapshot>> order(const QString &orderNo) = 0;
    /// L4: inserts `record` (status creating) unless a record for (order_no, channel)
    /// exists — the unique index decides. true: inserted.
    virtual Result<bool> insertRecordIfAbsent(const PaymentRecord &record) = 0;
    virtual Result<std::optional<PaymentRecord>> record(const QString &orderNo, Channel channel) = 0;
    /// CAS failed -> creating, attempt + 1. true: this call reused it.
    virtual Result<bool> reuseFailedRecord(const QString &paymentNo) = 0;
    /// A reused record whose trade the platform has closed gets a new out_trade_no (a
    /// platform never creates a closed one again): CAS on (paymentNo, creating). true: changed.
    virtual Result<bool> renumberRecord(const QString &paymentNo, const QString &newPaymentNo) = 0;
    /// L5: the fenced state-machine CAS (docs/design.md rules 2 and 3). Without a fence (the key
    /// store is down, so no lock and no token) the status guard alone decides.
    virtual Result<TransitionOutcome> transition(const QString &orderNo, OrderStatus from, OrderStatus to,
                                                 std::optional<qint64> fence) = 0;
    /// CAS creating -> pending with the platform's code_url. true: changed.
    virtual Result<bool> markRecordPending(const QString &paymentNo, const QString &codeUrl) = 0;
    /// CAS creating -> failed with the reason. true: changed.
    virtual Result<bool> markRecordFailed(const QString &paymentNo, const QString &lastError) = 0;
};

/// Storage for the confirm and token paths: orders and payment records.
///
/// inTransaction() runs `work` in one write transaction: it commits when work returns
/// success, and rolls back when work returns an error (which is then returned). On
/// contention (busy, deadlock, serialization) the transaction is rolled back and `work`
/// runs again, a bounded number of times — so work must have no effect outside the
/// transaction except setting the caller's variables, which it must reset on each run.
/// A nested inTransaction() on the same thread joins the outer transaction.
/// Thread-safe; the work runs on the calling thread.
class PaymentStore {
public:
    virtual ~PaymentStore() = default;
    virtual Result<std::optional<OrderSnapshot>> findOrder(const QString &orderNo) = 0;
    virtual Result<void> inTransaction(const std::function<Result<void>(ConfirmTransaction &)> &work) = 0;
};

} // namespace payonce::core
