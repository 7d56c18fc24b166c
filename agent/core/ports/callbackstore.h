#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/channel.h"
#include "core/common/result.h"
#include "core/orders/orderstatus.h"
#include "core/orders/transitionoutcome.h"
#include "core/settlement/finding.h"
#include "shared/layer.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>
#include <optional>
#include <utility>

namespace payonce::core {

/// The order as the callback path needs it: what it is owed when it becomes PAID.
struct CallbackOrder {
    struct Item {
        QString skuId;
        qint64 qty = 0;
    };
    QString orderNo;
    qint64 userId = 0;
    qint64 amountFen = 0;
    QString currency;
    OrderStatus status = OrderStatus::Pending;
    QString payNo; ///< the pay_no that paid it; empty before PAID
    QString paidChannel;
    QString rewardCouponTemplate; ///< empty: none
    qint64 rewardPoints = 0;
    QList<Item> items;
};

/// One row of callback_deliveries: every delivery, verified or not. rawBody and headers
/// are stored only for verified deliveries (they are what the worker and replay verify
/// again). httpStatus 0 and layer None mean "not decided yet" (decideDelivery follows).
struct DeliveryRecord {
    Channel channel = Channel::WeChat;
    QString payNo;
    QString orderNo;
    qint64 receivedAtMs = 0;
    bool verified = false;
    Layer layer = Layer::None;
    int httpStatus = 0;
    QString outcome; ///< error_code column: the outcome's wire name or the verifier's error
    /// Kept for a verified delivery with a body; an empty body keeps neither (a copy the
    /// seen set answered: the processed delivery's body is the one kept).
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray rawBody;
    QString agentId;
    QString traceId; ///< the receiving request's W3C trace id, may be empty
};

/// A pay_callback_log row (L4), keyed by (channel, pay_no).
struct AcceptedCallback {
    Channel channel = Channel::WeChat;
    QString payNo;
    QString orderNo;
    qint64 amountFen = 0;
    std::optional<qint64> deliveryId;
    qint64 createdAtMs = 0;
    /// The out_trade_no it pays (the notification's, or the queried one); what the worker
    /// asks the platform about when the row has no delivery. Empty: not known.
    QString paymentNo;
};

/// A reconciliation finding, upserted on (kind, subject): seen again, seen_count grows.
using CallbackFinding = Finding;

enum class LogInsert {
    Inserted,
    Duplicate
};

/// A paid order's keyed rows that need nothing from each other, for
/// CallbackTransaction::insertPaidRows.
struct PaidRows {
    QString orderNo;
    qint64 userId = 0;
    qint64 fence = 0;
    QString couponTemplateKey; ///< user_coupon (order_no, template_id); empty: no coupon
    QString pointType;         ///< point_log (order_no, point_type), with pointsDelta
    qint64 pointsDelta = 0;    ///< 0: no points
    QString outboxEventId;     ///< outbox event_id ("order.paid:<order_no>")
    QString outboxEventType;
    QJsonObject outboxPayload;
    QString traceId;   ///< outbox.trace_id; may be empty
    QString paymentNo; ///< its payment record becomes `paid` (if there is one)
};

/// Which of PaidRows' keyed rows insertPaidRows wrote (false: its key was taken already, or
/// it was not asked for).
struct PaidRowsWritten {
    bool coupon = false;
    bool points = false;
    bool outbox = false;
};

/// CallbackTransaction::takeStockLogged's answer.
struct StockTake {
    bool taken = false;  ///< the stock was there and is taken
    bool logged = false; ///< the stock_log entry was written now (false and taken: another path wrote it)
};

/// The statements of one callback business transaction (docs/design.md, "Callback path":
/// CAS to PAID → stock + stock_log → coupon → points → outbox → log row processed). Valid
/// only inside CallbackStore::inTransaction(); all commit or roll back together.
/// Every effect is insert-if-absent on its own key and answers true when this call wrote
/// it; no method reads before it writes.
class CallbackTransaction {
public:
    virtual ~CallbackTransaction() = default;

    virtual Result<std::optional<CallbackOrder>> order(const QString &orderNo) = 0;
    /// L5: UPDATE orders SET status = 'PAID', pay_no, paid_channel, paid_at, fence,
    /// version + 1 WHERE order_no = ? AND status IN ('PENDING','PAYING') AND fence <= ?
    /// (without a fence — no lock — the status guard alone decides).
    virtual Result<TransitionOutcome> markPaid(const QString &orderNo, const QString &payNo, Channel channel,
                                               std::optional<qint64> fence) = 0;
    /// The classic write used only when QA disables state_machine: the same UPDATE without
    /// the status guard (the caller decided on an earlier read). Still fenced.
    virtual Result<TransitionOutcome> forcePaid(const QString &orderNo, const QString &payNo, Channel channel,
                                                std::optional<qint64> fence) = 0;
    /// UPDATE skus SET stock = stock - qty WHERE sku_id = ? AND stock >= qty. true: taken;
    /// false: stock short (or no such sku).
    virtual Result<bool> takeStock(const QString &skuId, qint64 qty) = 0;
    /// Gives back what takeStock took in this same transaction (never after COMMIT).
    virtual Result<void> untakeStock(const QString &skuId, qint64 qty) = 0;
    /// The order's stock ledger entry (order_no, sku_id, entry_key): the paid transaction's
    /// deduction is entry "take" (QA's side_effect switch adds a nonce to it). true: written now.
    virtual Result<bool> insertStockLog(const QString &orderNo, const QString &skuId, const QString &entryKey,
                                        qint64 qty, qint64 fence) = 0;
    virtual Result<bool> insertCoupon(const QString &orderNo, qint64 userId, const QString &templateKey,
                                      qint64 fence) = 0;
    virtual Result<bool> insertPoints(const QString &orderNo, qint64 userId, const QString &pointType, qint64 delta,
                                      qint64 fence) = 0;
    /// traceId: the trace the event belongs to (outbox.trace_id; its delivery sends it as
    /// traceparent); may be empty.
    virtual Result<bool> insertOutbox(const QString &eventId, const QString &eventType, const QString &aggregateId,
                                      const QJsonObject &payload, const QString &traceId) = 0;
    /// The confirm path's payment record for this payment_no becomes `paid` (if there is one).
    virtual Result<void> markPaymentRecordPaid(const QString &paymentNo) = 0;
    /// pay_callback_log accepted -> processed (CAS). true: this call changed it.
    virtual Result<bool> markProcessed(Channel channel, const QString &payNo, const QString &outcome) = 0;
    /// The one-commit path: the delivery's callback_deliveries row, written with its
    /// decision in this transaction; its id.
    virtual Result<qint64> insertDelivery(const DeliveryRecord &delivery) = 0;
    /// The one-commit path: the pay_callback_log row written `processed` with `outcome` at
    /// once, insert-if-absent. Duplicate: a row for (channel, pay_no) exists in any status
    /// (nothing written; the caller rolls back).
    virtual Result<LogInsert> insertProcessed(const AcceptedCallback &row, const QString &outcome) = 0;
    /// true: the finding is new (not seen before).
    virtual Result<bool> raiseFinding(const CallbackFinding &finding) = 0;

    // The same writes grouped, for the paid transaction's round trips: one statement on
    // PostgreSQL (a data-modifying WITH), one statement each elsewhere; the answers are those
    // of the single writes above.

    /// insertCoupon (when couponTemplateKey is set), insertPoints (when pointsDelta > 0),
    /// insertOutbox and markPaymentRecordPaid.
    virtual Result<PaidRowsWritten> insertPaidRows(const PaidRows &rows) = 0;
    /// takeStock, and insertStockLog when the stock was taken. Taken but not logged: another
    /// path wrote the ledger entry, and the caller gives the stock back (untakeStock).
    virtual Result<StockTake> takeStockLogged(const QString &orderNo, const QString &skuId, const QString &entryKey,
                                              qint64 qty, qint64 fence) = 0;
    /// insertDelivery, then insertProcessed for `row` with the new delivery as its delivery
    /// (row.deliveryId is not read): the delivery's id and the log row's insert.
    virtual Result<std::pair<qint64, LogInsert>> insertDeliveryProcessed(const DeliveryRecord &delivery,
                                                                         const AcceptedCallback &row,
                                                                         const QString &outcome) = 0;
    /// The one-commit path: a row `accepted` for (channel, pay_no) becomes `processed` with
    /// `outcome` (a CAS on its status), and a row without a delivery (written from the
    /// platform's query) takes `deliveryId` as its delivery. true: this call finished it.
    virtual Result<bool> finishAcceptedRow(Channel channel, const QString &payNo, const QString &outcome,
                                           qint64 deliveryId) = 0;
    /// From here to COMMIT, a statement that waits on another holder's lock (its
    /// transaction open, perhaps paused before COMMIT on another agent) gives up after
    /// about a second: it fails Unavailable, the transaction is not run again, and
    /// lockWaitEnded() is true until it ends.
    virtual Result<void> boundLockWaits() = 0;
    virtual bool lockWaitEnded() const = 0;
};

/// Storage of the callback path: callback_deliveries, pay_callback_log, the business
/// transaction, findings. Thread-safe; work runs on the calling thread.
///
/// inTransaction() has PaymentStore::inTransaction()'s contract: one write transaction,
/// committed when work succeeds, rolled back on error, re-run on contention (so work must
/// reset the caller's variables each run); a nested write joins it.
class CallbackStore {
public:
    virtual ~CallbackStore() = default;

    /// The order a notification pays: through the payment record whose payment_no is the
    /// notification's out_trade_no, else the order whose order_no it is.
    virtual Result<std::optional<CallbackOrder>> findOrderForPayment(const QString &paymentNo) = 0;
    /// Appends a delivery; returns its id. Its own short transaction.
    virtual Result<qint64> appendDelivery(const DeliveryRecord &delivery) = 0;
    /// Appends deliveries in one transaction; their ids in order, once it has committed.
    /// Nothing is written when it fails.
    virtual Result<QList<qint64>> appendDeliveries(const QList<DeliveryRecord> &deliveries) = 0;
    /// Records the layer, status and outcome that decided delivery `id`.
    virtual Result<void> decideDelivery(qint64 id, Layer layer, int httpStatus, const QString &outcome) = 0;
    /// The stored raw delivery (verified deliveries only): what the worker re-verifies.
    virtual Result<std::optional<RawDelivery>> rawDelivery(qint64 id) = 0;
    /// L4: the log row as `accepted` in its own short transaction; Duplicate when a row for
    /// (channel, pay_no) exists in any status (decided by the unique index). Durable on return.
    virtual Result<LogInsert> insertAccepted(const AcceptedCallback &row) = 0;
    /// A row still `accepted` with no delivery (written from the platform's query) takes
    /// `deliveryId` as its delivery (a CAS: one caller wins). true: attached — the caller
    /// now finishes the row as if it had inserted it.
    virtual Result<bool> attachDelivery(Channel channel, const QString &payNo, qint64 deliveryId) = 0;
    /// Rows still `accepted` created at or before `createdBeforeMs`, oldest first. A row
    /// written before payment_no was recorded names its order's latest payment record of
    /// the row's channel.

    virtual Result<QList<AcceptedCallback>> listAccepted(qint64 createdBeforeMs, int limit) = 0;
    /// A finding in its own transaction (or joining the caller's); true: it is new.
    virtual Result<bool> raiseFinding(const CallbackFinding &finding) = 0;
    virtual Result<void> inTransaction(const std::function<Result<void>(CallbackTransaction &)> &work) = 0;
};

} // namespace payonce::core
