#include "core/qa/mutants.h"

#ifdef PAYONCE_SIMULATION_MUTANTS

#include <atomic>

namespace payonce::core::mutants {

namespace {
std::atomic<unsigned> g_on{0};
unsigned bit(Mutant mutant)
{
    return 1u << unsigned(mutant);
}
} // namespace

bool isOn(Mutant mutant)
{
    return (g_on.load(std::memory_order_relaxed) & bit(mutant)) != 0;
}

void switchOn(Mutant mutant)
{
    g_on.fetch_or(bit(mutant));
}

} // namespace payonce::core::mutants

#endif
