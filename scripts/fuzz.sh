#!/bin/sh
# Builds the libFuzzer targets (clang-14, ASan+UBSan) in a build folder of their own and
# runs each for SECONDS (default 60) on the committed seed corpus. Exit 0 when no target
# crashed, 1 when one did (the crashing input is kept under <build>/artifacts/<target>/),
# 2 when the build failed.
#
#   scripts/fuzz.sh [SECONDS]
#   PAYONCE_FUZZ_BUILD_DIR  build folder (default: <repo>/build-fuzz)
#   PAYONCE_FUZZ_JOBS       parallel compile jobs (default 2)
#
# Seeds: tests/fuzz/corpus/<target>/ (made by tests/fixtures/notifications/make-fixtures.py).
# Inputs the fuzzer finds go to <build>/corpus/<target>/, never into the committed seeds.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${PAYONCE_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${PAYONCE_FUZZ_JOBS:-2}
targets="wechat_notification alipay_notification"

started=$(date +%s)
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_COMPILER=clang++-14 -DPAYONCE_FUZZ=ON -DBUILD_TESTING=OFF >"$build.configure.log" 2>&1; then
    cat "$build.configure.log"
    echo "fuzz.sh: configure failed" >&2
    exit 2
fi
rm -f "$build.configure.log"
target_names=""
for t in $targets; do target_names="$target_names fuzz_$t"; done
# shellcheck disable=SC2086
if ! nice cmake --build "$build" -j "$jobs" --target $target_names; then
    echo "fuzz.sh: build failed" >&2
    exit 2
fi
echo "fuzz.sh: build took $(( $(date +%s) - started )) s"

status=0
for t in $targets; do
    work="$build/corpus/$t"
    artifacts="$build/artifacts/$t/"
    log="$build/fuzz_$t.log"
    mkdir -p "$work" "$artifacts"
    echo "fuzz.sh: fuzz_$t for $seconds s"
    if "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=70000 -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "$root/tests/fuzz/corpus/$t" >"$log" 2>&1; then
        grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)' "$log"
    else
        status=1
        echo "fuzz.sh: fuzz_$t FAILED; the last lines of $log:" >&2
        tail -n 60 "$log" >&2
        ls -l "$artifacts" >&2
    fi
done
echo "fuzz.sh: total $(( $(date +%s) - started )) s, status $status"
exit $status
