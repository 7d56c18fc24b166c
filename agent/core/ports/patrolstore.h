#pragma once

#include "core/finding.h"
#include "core/result.h"

#include <QList>
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
    qint64 rewardPoints = 0;
    QList<Item> items;
    QList<Coupon> coupons;         ///< user_coupon rows with this order_no, by id
    QList<PointEntry> points;      ///< point_log rows with this order_no, by id
    QList<StockEntry> stock;       ///< stock_log rows with this order_no, by id
    bool hasPaidEvent = false;     ///< an outbox row "order.paid:<order_no>" exists
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
    /// Open findings of these kinds not seen at or after seenSinceMs become resolved.
    virtual Result<int> resolveNotSeenSince(const QStringList &kinds, qint64 seenSinceMs, qint64 nowMs) = 0;
};

} // namespace payonce::core
