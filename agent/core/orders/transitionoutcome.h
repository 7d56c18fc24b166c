#pragma once

namespace payonce::core {

/// How a state-machine CAS on an order ended (docs/design.md rule 2). Only Transitioned wrote.
enum class TransitionOutcome {
    Transitioned, ///< this call made the change (1 affected row)
    Lost,         ///< 0 rows: the order was not in `from` — someone else did it; stop
    StaleFence,   ///< 0 rows: the order carries a newer fencing token than this write
    NotFound,
};

} // namespace payonce::core
