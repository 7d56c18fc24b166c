#!/usr/bin/env bash
# Installs what payonce needs from Debian 12 (only what is missing), then configures and
# builds into ./build (RelWithDebInfo, Ninja, -j2).
#
# Re-running with everything in place makes no apt call at all (dpkg-query only) and does
# an incremental build, so it takes seconds. When packages are missing it must run as root.
# Installing server packages on Debian starts and enables their services; this script
# does neither: a temporary /usr/sbin/policy-rc.d (exit 101) stops invoke-rc.d from
# starting anything, and the units that the installation enabled are disabled again.
# Services enabled before this script ran are left as they were. Tests start their own
# throwaway servers (docs/testing.md, "Servers the tests start").
#
# Environment: PAYONCE_BUILD_DIR (default ./build), PAYONCE_BUILD_JOBS (default 2: the
# build machines have 2 cores shared with other work).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PAYONCE_BUILD_DIR:-$root/build}"
build_type=RelWithDebInfo
jobs="${PAYONCE_BUILD_JOBS:-2}"

packages=(
  # build
  cmake ninja-build g++
  qt6-base-dev qt6-base-dev-tools qt6-httpserver-dev qt6-websockets-dev qt6-qpa-plugins
  libqt6sql6-sqlite libqt6sql6-psql libqt6sql6-mysql
  libqcustomplot-dev libhiredis-dev libssl-dev
  # the console's translations: lupdate/lrelease, their CMake package, Qt's own zh_CN words,
  # and a Chinese font for the pictures in zh_CN
  qt6-l10n-tools qt6-tools-dev qt6-translations-l10n fonts-noto-cjk
  # servers the integration tests start themselves
  redis-server redis-tools postgresql mariadb-server mariadb-client nginx prometheus
  # checks and fixtures: valgrind, sanitizers, AES-GCM fixtures, headless GUI tests
  valgrind clang-14 libclang-rt-14-dev python3-cryptography xvfb libgl-dev
  # the house style (tests/style): the formatter and the linter of .clang-format / .clang-tidy
  clang-format-14 clang-tidy-14
  # the Debian packages' checks (tests/package): lintian on the .deb files
  lintian
  # docs checks (tests/docs): the contract against the routes, answers and settings
  python3-yaml python3-jsonschema
)

log() { printf 'setup: %s\n' "$*" >&2; }

is_installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}

# Units and SysV links that are enabled now, one per line, to tell afterwards which ones
# the installation enabled. --root=/ works with and without a running systemd.
enabled_services() {
  if command -v systemctl >/dev/null 2>&1; then
    systemctl --root=/ list-unit-files --state=enabled --no-legend --no-pager 2>/dev/null |
      awk '{print "systemd " $1}' || true
  fi
  local link
  for link in /etc/rc[2-5].d/S*; do
    [[ -e "$link" ]] && printf 'sysv %s\n' "$(basename "$link" | sed 's/^S[0-9]*//')"
  done
  return 0
}

policy=/usr/sbin/policy-rc.d
policy_backup=""
restore_policy() {
  rm -f "$policy"
  if [[ -n "$policy_backup" ]]; then
    mv -f "$policy_backup" "$policy"
  fi
}

install_missing() {
  if [[ $EUID -ne 0 ]]; then
    log "missing packages: $*"
    log "run this script as root to install them"
    exit 1
  fi
  log "installing: $*"

  if [[ -e "$policy" ]]; then
    policy_backup="$(mktemp "$policy.payonce-backup.XXXXXX")"
    cp -p "$policy" "$policy_backup"
  fi
  trap restore_policy EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  printf '#!/bin/sh\n# written by payonce scripts/setup.sh for the duration of apt-get install\nexit 101\n' >"$policy"
  chmod 0755 "$policy"

  local before after
  before="$(enabled_services | sort -u)"

  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "$@"

  after="$(enabled_services | sort -u)"
  local kind name
  while read -r kind name; do
    [[ -n "$name" ]] || continue
    log "not enabling $name ($kind), enabled by its package"
    case "$kind" in
      systemd) systemctl --root=/ disable --quiet "$name" 2>/dev/null || log "could not disable $name" ;;
      sysv) update-rc.d "$name" disable >/dev/null 2>&1 || log "could not disable $name" ;;
    esac
  done < <(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after"))

  restore_policy
  policy_backup=""
  trap - EXIT INT TERM
}

missing=()
for package in "${packages[@]}"; do
  is_installed "$package" || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
  install_missing "${missing[@]}"
fi

# The OpenAPI linter (tst_openapi_lint), pinned in tools/openapi-lint/package-lock.json,
# installed into that folder only when missing. @redocly/cli needs Node.js >= 20.19, newer
# than Debian 12's nodejs package, so Node is not installed from apt here.
lint_dir="$root/tools/openapi-lint"
if [[ ! -x "$lint_dir/node_modules/.bin/redocly" ]]; then
  if ! command -v npm >/dev/null 2>&1; then
    log "npm is missing: install Node.js >= 20.19 with npm for the OpenAPI lint, then run this again"
    exit 1
  fi
  log "installing @redocly/cli into tools/openapi-lint (npm ci)"
  npm ci --prefix "$lint_dir" --no-audit --no-fund
fi

# Configure only when needed: no cache yet, or another build type. A cache made with
# another generator cannot be switched to Ninja in place.
cache="$build_dir/CMakeCache.txt"
configure=0
if [[ ! -f "$cache" ]]; then
  configure=1
else
  generator="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")"
  if [[ "$generator" != Ninja ]]; then
    log "$build_dir was configured with '$generator', not Ninja; remove it and run again"
    exit 1
  fi
  [[ "$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")" == "$build_type" ]] || configure=1
fi
if ((configure)); then
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type"
fi
cmake --build "$build_dir" -j"$jobs"
