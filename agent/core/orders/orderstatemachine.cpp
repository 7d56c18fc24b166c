#include "core/orders/orderstatemachine.h"

#include <algorithm>
#include <array>

namespace payonce::core {

namespace {
using S = OrderStatus;
constexpr std::array<OrderTransition, 8> kTransitions{{
    {S::Pending, S::Paying, "confirm accepted"},
    {S::Paying, S::Pending, "gateway failure or breaker open: the user may retry"},
    {S::Pending, S::Paid, "verified success notification, or the patrol after the gateway's query"},
    {S::Paying, S::Paid, "verified success notification, or the patrol after the gateway's query"},
    {S::Pending, S::Closed, "payment timeout, after the gateway's close-order"},
    {S::Paid, S::Refunding, "an approved refund started"},
    {S::Refunding, S::Refunded, "refund confirmed by notification or query"},
    {S::Refunding, S::Paid, "the refund failed"},
}};
} // namespace

std::span<const OrderTransition> OrderStateMachine::transitions()
{
    return kTransitions;
}

bool OrderStateMachine::isAllowed(OrderStatus from, OrderStatus to)
{
    return std::any_of(kTransitions.begin(), kTransitions.end(),
                       [&](const OrderTransition &t) { return t.from == from && t.to == to; });
}

bool OrderStateMachine::isTerminal(OrderStatus status)
{
    return std::none_of(kTransitions.begin(), kTransitions.end(),
                        [&](const OrderTransition &t) { return t.from == status; });
}

} // namespace payonce::core
