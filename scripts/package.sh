#!/usr/bin/env bash
# Builds the Debian packages payonce-agent and payonce-console into a folder
# (default ./build/packages): the programs they carry are built first (-j2), then cpack
# makes one .deb per install component (cmake/PayoncePackaging.cmake). Prints the paths.
#
#   scripts/package.sh [OUT_DIR]
# Environment: PAYONCE_BUILD_DIR (default ./build, configured by scripts/setup.sh if
# missing), PAYONCE_BUILD_JOBS (default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PAYONCE_BUILD_DIR:-$root/build}"
jobs="${PAYONCE_BUILD_JOBS:-2}"
out_dir="$(mkdir -p "${1:-$build_dir/packages}" && cd "${1:-$build_dir/packages}" && pwd)"

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
cmake --build "$build_dir" -j"$jobs" \
  --target payonce-agent payonce-sim payonce-console payonce_package_changelog >&2

# cpack's own scratch folder lives beside the packages; only the .deb files are the result.
rm -f "$out_dir"/payonce-agent_*.deb "$out_dir"/payonce-console_*.deb
(cd "$build_dir" && cpack -G DEB -B "$out_dir/_cpack" >&2)
mv "$out_dir"/_cpack/*.deb "$out_dir"/
rm -rf "$out_dir/_cpack"
ls -1 "$out_dir"/payonce-agent_*.deb "$out_dir"/payonce-console_*.deb
