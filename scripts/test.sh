#!/usr/bin/env bash
# Builds (scripts/setup.sh) and runs every test; the exit code is ctest's.
# Extra arguments go to ctest: scripts/test.sh -L unit, scripts/test.sh -R tst_config.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"

cd "${PAYONCE_BUILD_DIR:-$root/build}"
# -j2, the machine's two cores. Integration tests each start their own servers on ports
# of their own, so two can run side by side; a test that is sensitive to timing (lock
# TTLs, watchdogs, breakers) must say so itself with RUN_SERIAL or RESOURCE_LOCK rather
# than slow the whole suite down to -j1.
exec ctest --output-on-failure -j2 "$@"
