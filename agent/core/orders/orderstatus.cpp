#include "core/orders/orderstatus.h"

namespace payonce::core {

QString orderStatusName(OrderStatus status)
{
    switch (status) {
    case OrderStatus::Pending: return QStringLiteral("PENDING");
    case OrderStatus::Paying: return QStringLiteral("PAYING");
    case OrderStatus::Paid: return QStringLiteral("PAID");
    case OrderStatus::Closed: return QStringLiteral("CLOSED");
    case OrderStatus::Refunding: return QStringLiteral("REFUNDING");
    case OrderStatus::Refunded: return QStringLiteral("REFUNDED");
    }
    Q_UNREACHABLE();
}

std::optional<OrderStatus> orderStatusFromName(QStringView name)
{
    for (OrderStatus status : allOrderStatuses) {
        if (orderStatusName(status) == name)
            return status;
    }
    return std::nullopt;
}

} // namespace payonce::core
