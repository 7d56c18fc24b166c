#include "core/orders/setupservice.h"

#include <QSet>

#include <algorithm>

namespace payonce::core {

namespace {

constexpr qsizetype kMaxIdLength = 64;

QString idRule(const QString &field)
{
    return QStringLiteral("field \"%1\" must be 1 to 64 characters of A-Z, a-z, 0-9, '_' or '-'").arg(field);
}

} // namespace

QString setupErrorName(SetupErrorCode code)
{
    switch (code) {
    case SetupErrorCode::InvalidRequest: return QStringLiteral("invalid_request");
    case SetupErrorCode::InvalidAmount: return QStringLiteral("invalid_amount");
    case SetupErrorCode::InvalidUser: return QStringLiteral("invalid_user");
    case SetupErrorCode::OrderNotFound: return QStringLiteral("order_not_found");
    case SetupErrorCode::OrderNotYours: return QStringLiteral("order_not_yours");
    case SetupErrorCode::OrderExists: return QStringLiteral("order_exists");
    case SetupErrorCode::SkuNotFound: return QStringLiteral("sku_not_found");
    case SetupErrorCode::Storage: return QStringLiteral("storage");
    }
    Q_UNREACHABLE();
}

bool isValidBusinessId(QStringView id)
{
    if (id.isEmpty() || id.size() > kMaxIdLength)
        return false;
    for (const QChar c : id) {
        const char16_t u = c.unicode();
        const bool ok = (u >= u'A' && u <= u'Z') || (u >= u'a' && u <= u'z') || (u >= u'0' && u <= u'9') || u == u'_'
                        || u == u'-';
        if (!ok)
            return false;
    }
    return true;
}

std::optional<SetupError> SetupService::validateOrderDraft(const OrderDraft &order)
{
    if (!isValidBusinessId(order.orderNo))
        return SetupError::invalid(idRule(QStringLiteral("order_no")));
    if (order.userId <= 0)
        return SetupError::invalid(QStringLiteral("field \"user_id\" must be a positive integer"));
    if (order.amountFen <= 0)
        return SetupError{SetupErrorCode::InvalidAmount,
                          QStringLiteral("field \"amount\" must be a positive decimal string with at most 2 places"),
                          {}};
    if (order.items.isEmpty())
        return SetupError::invalid(QStringLiteral("field \"items\" must be a non-empty array"));
    QSet<QString> seen;
    for (qsizetype i = 0; i < order.items.size(); ++i) {
        const OrderItem &item = order.items.at(i);
        const QString prefix = QStringLiteral("items[%1].").arg(i);
        if (!isValidBusinessId(item.skuId))
            return SetupError::invalid(idRule(prefix + QStringLiteral("sku_id")));
        if (item.qty <= 0)
            return SetupError::invalid(QStringLiteral("field \"%1qty\" must be a positive integer").arg(prefix));
        if (seen.contains(item.skuId))
            return SetupError::invalid(
                QStringLiteral("field \"%1sku_id\" repeats SKU %2; list each SKU once").arg(prefix, item.skuId));
        seen.insert(item.skuId);
    }
    if (order.rewardCouponTemplate && !isValidBusinessId(*order.rewardCouponTemplate))
        return SetupError::invalid(idRule(QStringLiteral("reward_coupon_template")));
    if (order.rewardPoints < 0)
        return SetupError::invalid(QStringLiteral("field \"reward_points\" must be an integer >= 0"));
    return std::nullopt;
}

SetupResult<SkuStock> SetupService::setSkuStock(const QString &skuId, qint64 stock)
{
    if (!isValidBusinessId(skuId))
        return SetupError::invalid(idRule(QStringLiteral("sku_id")));
    if (stock < 0)
        return SetupError::invalid(QStringLiteral("field \"stock\" must be an integer >= 0"));
    auto stored = m_repository.setSkuStock(skuId, stock);
    if (!stored)
        return SetupError::storage(stored.error());
    return stored.value();
}

SetupResult<SkuStock> SetupService::skuStock(const QString &skuId)
{
    if (!isValidBusinessId(skuId))
        return SetupError::invalid(idRule(QStringLiteral("sku_id")));
    auto found = m_repository.skuStock(skuId);
    if (!found)
        return SetupError::storage(found.error());
    if (!found.value())
        return SetupError{SetupErrorCode::SkuNotFound, QStringLiteral("SKU %1 does not exist").arg(skuId), {}};
    return *found.value();
}

SetupResult<OrderDetail> SetupService::createOrder(const OrderDraft &order)
{
    if (auto invalid = validateOrderDraft(order))
        return *std::move(invalid);
    const auto created = m_repository.createOrder(order);
    if (!created) {
        if (created.error().code == ErrorCode::Duplicate)
            return SetupError{
                SetupErrorCode::OrderExists, QStringLiteral("order %1 already exists").arg(order.orderNo), {}};
        return SetupError::storage(created.error());
    }
    OrderDetail detail;
    detail.orderNo = order.orderNo;
    detail.userId = order.userId;
    detail.amountFen = order.amountFen;
    detail.status = OrderStatus::Pending;
    detail.version = 0;
    detail.rewardCouponTemplate = order.rewardCouponTemplate;
    detail.rewardPoints = order.rewardPoints;
    detail.items = order.items;
    std::sort(detail.items.begin(), detail.items.end(),
              [](const OrderItem &a, const OrderItem &b) { return a.skuId < b.skuId; });
    return detail;
}

SetupResult<OrderDetail> SetupService::orderDetail(const QString &orderNo)
{
    if (!isValidBusinessId(orderNo))
        return SetupError::invalid(idRule(QStringLiteral("order_no")));
    auto found = m_repository.orderDetail(orderNo);
    if (!found)
        return SetupError::storage(found.error());
    if (!found.value())
        return SetupError{SetupErrorCode::OrderNotFound, QStringLiteral("order %1 does not exist").arg(orderNo), {}};
    return *std::move(found).value();
}

SetupResult<OrderDetail> SetupService::orderOfUser(const QString &orderNo, qint64 userId)
{
    if (userId <= 0)
        return SetupError{SetupErrorCode::InvalidUser, QStringLiteral("X-User-Id must be a positive integer"), {}};
    auto detail = orderDetail(orderNo);
    if (!detail)
        return detail;
    if (detail.value().userId != userId)
        return SetupError{
            SetupErrorCode::OrderNotYours, QStringLiteral("order %1 belongs to another user").arg(orderNo), {}};
    return detail;
}

} // namespace payonce::core
