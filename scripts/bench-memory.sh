#!/bin/sh
# The memory check, outside CI: the agent under a callback storm for MINUTES
# (default 10) — notifications for 2 000 confirmed payments, the first of each paying its
# order, every later one a duplicate; every other send re-sends the order's last signed
# copy byte for byte, the others are signed afresh — with its VmRSS sampled every 5 s;
# after a warm-up (a minute, or a fifth of a shorter storm) prints min / max / mean, the
# largest deviation from the mean (target ±5%), and the trend: the least-squares slope
# and what it rises over the run as a share of the mean (target: at most 2%). Fractions
# work: 0.5 = 30 s.
#
#   scripts/bench-memory.sh [MINUTES] [payonce-bench options: --db postgresql --redis server ...]
set -eu
cd "$(dirname "$0")/.."
minutes=${1:-10}
[ $# -gt 0 ] && shift
seconds=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60); if (s < 1) s = 1; print s }')
bench="${PAYONCE_BUILD_DIR:-build}/tools/bench/payonce-bench"
# setup.sh installs what is missing and builds everything, the benchmark included.
[ -x "$bench" ] || scripts/setup.sh
exec "$bench" --memory-storm "$seconds" "$@"
