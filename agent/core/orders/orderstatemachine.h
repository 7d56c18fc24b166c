#pragma once

#include "core/orders/orderstatus.h"

#include <QString>

#include <span>

namespace payonce::core {

/// One allowed edge of the order state machine and why it exists.
struct OrderTransition {
    OrderStatus from;
    OrderStatus to;
    const char *why;
};

/// The order state machine of docs/design.md as data. Every edge not listed is refused; the
/// storage layer asks isAllowed() before it issues a CAS, so an illegal transition never
/// reaches the database. Pure and thread-safe.
class OrderStateMachine {
public:
    static std::span<const OrderTransition> transitions();
    static bool isAllowed(OrderStatus from, OrderStatus to);
    /// A terminal state has no way out (CLOSED, REFUNDED).
    static bool isTerminal(OrderStatus status);
};

} // namespace payonce::core
