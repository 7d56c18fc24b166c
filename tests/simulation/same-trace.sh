#!/usr/bin/env bash
# Runs one seed twice, each on a fresh database of the dialect, and fails unless both
# runs wrote the same operation trace: a seed must replay exactly.
# Usage: same-trace.sh SIM_CHECK DIALECT SEED STEPS
set -euo pipefail
sim=$1 dialect=$2 seed=$3 steps=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for run in 1 2; do
  # A violation (exit 1) still writes its trace; only a start-up error (2) ends the test here.
  status=0
  "$sim" --dialect "$dialect" --seed "$seed" --steps "$steps" --trace "$dir/trace$run.txt" >"$dir/out$run.txt" 2>/dev/null || status=$?
  if [[ $status -eq 2 ]]; then
    cat "$dir/out$run.txt"
    exit 1
  fi
done
lines=$(wc -l <"$dir/trace1.txt")
if [[ $lines -lt 100 ]]; then
  echo "only $lines trace lines: too short a run to say anything"
  exit 1
fi
if ! diff -u "$dir/trace1.txt" "$dir/trace2.txt" >"$dir/diff.txt"; then
  echo "seed $seed on $dialect: the two runs' traces differ"
  head -40 "$dir/diff.txt"
  exit 1
fi
echo "seed $seed on $dialect: both runs wrote the same $lines-line trace"
