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
status=0
ctest --output-on-failure -j2 "$@" || status=$?
if [ "$status" -ne 0 ] && [ -f Testing/Temporary/LastTest.log ]; then
    # A failed suite's output can be long and is printed mid-run; where each one failed is
    # repeated last, so that a reader of only the end of the log still sees it.
    echo "== where the failed tests failed (QtTest FAIL! lines, from Testing/Temporary/LastTest.log) =="
    grep -h -A1 '^FAIL!' Testing/Temporary/LastTest.log | cut -c1-600 | tail -n 80 || true
fi
exit "$status"
