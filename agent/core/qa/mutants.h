#pragma once

/// Deliberately wrong behaviours, one per rule the money paths keep, so that the lifecycle
/// simulation (tests/simulation) can show it catches each one instead of assuming so.
///
/// isOn() is a constant false in every build except the simulation's own copy of the core
/// and SQL libraries, compiled with PAYONCE_SIMULATION_MUTANTS: the agent, the console and
/// every other test contain none of these branches after the optimiser has been through.
/// Two more mutants of the simulation (unlock-before-commit, skip-unique-index) use the
/// callback pipeline's QA layer switches and need no hook here.
namespace payonce::core::mutants {

enum class Mutant {
    StockRestoreUnkeyed, ///< a stock give-back updates skus without its stock_log entry
    CasIgnoresStatus,    ///< the callback CAS to PAID drops its status guard
    ApproveOwnProposal,  ///< four-eyes skipped (the service's check and the statement's): the proposer may decide
    RefundOverAmount,    ///< a refund is recorded whatever is left of the payment
    DuplicateOutbox,     ///< a delivered outbox event stays pending and is delivered again
};

#ifdef PAYONCE_SIMULATION_MUTANTS
bool isOn(Mutant mutant);
void switchOn(Mutant mutant);
#else
constexpr bool isOn(Mutant)
{
    return false;
}
#endif

} // namespace payonce::core::mutants
