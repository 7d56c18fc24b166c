#pragma once

#include <QString>

#include <array>
#include <optional>

namespace payonce::core {

/// The states of an order (docs/design.md, "Order state machine"). Stored as their wire name.
enum class OrderStatus {
    Pending,
    Paying,
    Paid,
    Closed,
    Refunding,
    Refunded
};

inline constexpr std::array allOrderStatuses{OrderStatus::Pending, OrderStatus::Paying,    OrderStatus::Paid,
                                             OrderStatus::Closed,  OrderStatus::Refunding, OrderStatus::Refunded};

/// "PENDING", "PAYING", "PAID", "CLOSED", "REFUNDING", "REFUNDED".
QString orderStatusName(OrderStatus status);
std::optional<OrderStatus> orderStatusFromName(QStringView name);

} // namespace payonce::core
