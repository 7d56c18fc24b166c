#!/usr/bin/env bash
# Fresh random seeds of the lifecycle simulation for as long as asked, on each dialect in
# turn (outside CI: the test command runs fixed seeds). Prints, per dialect, the seeds run,
# the steps and the violations, each violation with its seed and the command that replays it.
#   scripts/simulate.sh [MINUTES per dialect, default 5] [DIALECT ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
minutes="${1:-5}"
shift || true
dialects=("$@")
((${#dialects[@]} > 0)) || dialects=(sqlite postgresql mariadb)
"$root/scripts/setup.sh" >&2
sim="${PAYONCE_BUILD_DIR:-$root/build}/tests/simulation/payonce-sim-check"
status=0
for dialect in "${dialects[@]}"; do
  log="$(mktemp)"
  "$sim" --dialect "$dialect" --seed random --minutes "$minutes" --steps 2000 2>/dev/null | tee "$log" |
    grep -E '^(VIOLATION|  |replay:|seeds run|seed [0-9]+:)' | sed "s/^/$dialect: /" || true
  grep -q '^VIOLATION' "$log" && status=1
  rm -f "$log"
done
exit $status
