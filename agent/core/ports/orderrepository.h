#pragma once

#include "core/common/result.h"
#include "core/confirm/paymentrecord.h"
#include "core/orders/orderstatus.h"

#include <QList>
#include <QString>

#include <optional>

namespace payonce::core {

/// One line of an order: qty units of a SKU.
struct OrderItem {
    QString skuId;
    qint64 qty = 0;
    bool operator==(const OrderItem &) const = default;
};

/// An order as the set-up API creates it (docs/openapi.yaml, "Orders and stock"), already validated
/// by SetupService: ids of [A-Za-z0-9_-]{1,64}, userId > 0, amountFen > 0, items non-empty
/// with distinct SKUs and qty > 0, rewardPoints >= 0.
struct OrderDraft {
    QString orderNo;
    qint64 userId = 0;
    qint64 amountFen = 0;
    QList<OrderItem> items;
    std::optional<QString> rewardCouponTemplate;
    qint64 rewardPoints = 0;
};

/// A SKU's stock (skus row).
struct SkuStock {
    QString skuId;
    qint64 stock = 0;
    bool operator==(const SkuStock &) const = default;
};

/// A stock deduction made for a paid order (stock_log).
struct StockEffect {
    QString skuId;
    qint64 qty = 0;
};

/// A coupon granted for a paid order (user_coupon); status "active" or "frozen".
struct CouponEffect {
    QString templateId;
    QString status;
};

/// A points entry for a paid order (point_log); a reversal is a negative delta.
struct PointEffect {
    QString pointType;
    qint64 delta = 0;
};

/// A reconciliation finding about an order (findings).
struct OrderFinding {
    qint64 id = 0;
    QString kind;
    QString status;   ///< "open" | "resolved"
    QString payNo;    ///< empty when the finding names none
    QString evidence; ///< as stored (JSON text)
    qint64 seenCount = 0;
    qint64 firstSeenAtMs = 0;
    qint64 lastSeenAtMs = 0;
};

/// Everything the set-up API shows about one order: the row, its items, its payment
/// records, the side effects written for it, and the findings that name it.
struct OrderDetail {
    QString orderNo;
    qint64 userId = 0;
    qint64 amountFen = 0;
    OrderStatus status = OrderStatus::Pending;
    qint64 version = 0;
    std::optional<QString> payNo;
    std::optional<QString> rewardCouponTemplate;
    qint64 rewardPoints = 0;
    QList<OrderItem> items;        ///< by sku_id
    QList<PaymentRecord> payments; ///< oldest first
    QList<StockEffect> stock;      ///< by sku_id
    QList<CouponEffect> coupons;   ///< by template_id
    QList<PointEffect> points;     ///< oldest first
    QList<OrderFinding> findings;  ///< oldest first
};

/// Storage for the set-up API: orders with their items, SKU stock, and the order detail
/// view. Implementations take validated input (SetupService checks it) and never decide a
/// duplicate by a prior read: the database's unique keys do.
///
/// - createOrder(): the order (PENDING, version 0) and all its items in one transaction.
///   An existing order_no is Duplicate and nothing at all is written. Not idempotent by
///   design: the second call with the same order_no is that Duplicate.
/// - setSkuStock(): an upsert (creates the SKU or replaces its stock); idempotent, safe to
///   retry. It does not take part in the payment path's conditional deduction beyond
///   overwriting the number, which is what a set-up call means.
/// - skuStock(), orderDetail(): reads; nullopt when absent. The detail is read without
///   one enclosing snapshot (it is a view for set-up, QA and tests).
/// Errors: Busy/Unavailable (retrying is safe), Internal. Thread-safe; work runs on the
/// calling thread.
class OrderRepository {
public:
    virtual ~OrderRepository() = default;

    virtual Result<void> createOrder(const OrderDraft &order) = 0;
    virtual Result<SkuStock> setSkuStock(const QString &skuId, qint64 stock) = 0;
    virtual Result<std::optional<SkuStock>> skuStock(const QString &skuId) = 0;
    virtual Result<std::optional<OrderDetail>> orderDetail(const QString &orderNo) = 0;
};

} // namespace payonce::core
