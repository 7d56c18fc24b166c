#pragma once

#include "benchoptions.h"

namespace payonce::bench {

/// The memory check (outside CI; scripts/bench-memory.sh): the agent under a
/// callback storm for `options.memoryStorm` — a pool of confirmed payments whose WeChat
/// notifications are signed afresh for every send (as the platform re-signs its retries,
/// so the ±300 s window never runs out), the first of each paying its order and every
/// later one a duplicate — while the agent's VmRSS is sampled every few seconds. Samples
/// taken after the warm-up give min / max / mean and the largest deviation from the mean
/// in per cent (the target: within ±10%). Prints them; returns the exit code (0, or 1
/// when the storm met an error).
int runMemoryStorm(const BenchOptions &options);

} // namespace payonce::bench
