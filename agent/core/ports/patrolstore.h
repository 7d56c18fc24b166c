#pragma once

#include "core/common/channel.h"
#include "core/common/result.h"
#include "core/ports/intransaction.h"
#include "core/settlement/finding.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace payonce::core {

/// A PAID order with what it is owed and the effects written for it (all rows, however
/// they got there).
struct PaidOrderEffects {
    struct Item {
        QString skuId;
        qint64 qty = 0;
    };
    struct Coupon {
        qint64 id = 0;
        QString templateId;
        QString status; ///< "active" | "frozen"
    };
    struct PointEntry {
        qint64 id = 0;
        QString pointType;
        qint64 delta = 0;
    };
    struct StockEntry {
        qint64 id = 0;
        QString skuId;
        qint64 qty = 0;
    };

    QString orderNo;
    qint64 userId = 0;
    QString payNo;
    QString rewardCouponTemplate; ///< empty: no coupon owed
    qint64 rewardPoints = 0;      ///< owed: reward_points less what partial refunds took back
    QList<Item> items;            ///< owed: what it bought less what partial refunds gave back
    QList<Coupon> coupons;        ///< user_coupon rows with this order_no, by id
    QList<PointEntry> points;     ///< point_log rows with this order_no, by id
    QList<StockEntry> stock;      ///< stock_log rows with this order_no, by id
    bool hasPaidEvent = false;    ///< an outbox row "order.paid:<order_no>" exists
};

/// An order in PAYING whose last change is older than the patrol's threshold, with its
/// payment attempts still open at a platform (payment_records creating|pending).
struct StuckPayingOrder {
    struct Attempt {
        QString paymentNo;
        Channel channel = Channel::WeChat;
        QString status; ///< "creating" | "pending"
        qint64 amountFen = 0;
    };
    QString orderNo;
    qint64 amountFen = 0;
    qint64 payingSinceMs = 0; ///< orders.updated_at
    QList<Attempt> attempts;  ///< may be empty (an attempt that failed without reverting the order)
};

/// A pay_callback_log row still `accepted` past the patrol's threshold.
struct StuckAcceptedRow {
    Channel channel = Channel::WeChat;
    QString payNo;
    QString orderNo;
    QString orderStatus;
    bool hasDelivery = false; ///< false: written by the patrol's own settlement, finished by it
    qint64 createdAtMs = 0;
};

/// A processed payment (pay_callback_log) that does not match its order: paid by another
/// pay_no or after the order closed (a double payment), or for another amount.
struct PaymentAnomaly {
    Channel channel = Channel::WeChat;
    QString payNo;
    QString orderNo;
    qint64 amountFen = 0; ///< as the platform notified it
    QString orderStatus;
    QString orderPayNo; ///< the payment the order is PAID by (may be empty)
    qint64 orderAmountFen = 0;
};

/// What the reconciliation patrol reads and writes. Thread-safe; work runs on the calling
/// thread.
class PatrolStore {
public:
    virtual ~PatrolStore() = default;
    /// PAID orders with order_no > afterOrderNo, by order_no, at most `limit`.
    virtual Result<QList<PaidOrderEffects>> paidOrders(const QString &afterOrderNo, int limit) = 0;
    /// The shared finding upsert (insert, or seen again), in its own transaction.
    virtual Result<StoredFinding> raiseFinding(const Finding &finding, qint64 nowMs) = 0;
    /// Orders in PAYING with updated_at < updatedBeforeMs, oldest first, at most `limit`.
    virtual Result<QList<StuckPayingOrder>> stuckPaying(qint64 updatedBeforeMs, int limit) = 0;
    /// One transaction: each open attempt becomes failed under its new payment_no
    /// (`renumbered`: old → new — its trade was closed at the platform, and a platform never
    /// creates a closed out_trade_no again; a later confirm reuses the record) with
    /// lastError, and the order goes PAYING → PENDING by a status CAS. false: the order was
    /// no longer PAYING or an attempt was no longer open (nothing written).
    /// `audit` runs in the revert's transaction, only when the revert is made.
    virtual Result<bool> revertPaying(const QString &orderNo, const QList<QPair<QString, QString>> &renumbered,
                                      const QString &lastError, qint64 nowMs, const InTransaction &audit = {}) = 0;
    /// Processed payments that are not the one their order is PAID by, or whose amount is
    /// not the order's, and are not refunded in full, by log id after afterLogId, at most
    /// `limit`; with the log id of the last one in *lastLogId.
    virtual Result<QList<PaymentAnomaly>> paymentAnomalies(qint64 afterLogId, int limit, qint64 *lastLogId) = 0;
    /// `accepted` log rows with created_at < createdBeforeMs, oldest first, at most `limit`.
    virtual Result<QList<StuckAcceptedRow>> stuckAccepted(qint64 createdBeforeMs, int limit) = 0;
    /// Open findings of these kinds not seen at or after seenSinceMs become resolved.
    virtual Result<int> resolveNotSeenSince(const QStringList &kinds, qint64 seenSinceMs, qint64 nowMs) = 0;
};

} // namespace payonce::core
