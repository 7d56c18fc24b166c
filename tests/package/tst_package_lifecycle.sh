#!/usr/bin/env bash
# The Debian packages from start to purge on this machine (as root; CI runs as root):
# build them (scripts/package.sh), lintian with no error, dpkg -i both (apt-get -f if a
# dependency is missing), systemd-analyze verify on the installed unit, the installed
# agent started as the payonce user exactly as the unit's ExecStart says, against SQLite
# under /var/lib/payonce with the installed config, /healthz and an authenticated call,
# SIGTERM, then dpkg --purge and every trace checked gone: the user, the group, /etc,
# /var/lib, the unit's enablement, the statoverride. Whatever happens, the trap purges
# what it installed, and removes the dependencies apt-get -f added.
#
#   tst_package_lifecycle.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

source_dir="$1"
build_dir="$2"

fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
note() { printf '%s\n' "$*" >&2; }

[[ $EUID -eq 0 ]] || fail "must run as root: it installs and purges packages"
for package in payonce-agent payonce-console; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)"
  [[ -z "$status" || "$status" == not-installed ]] ||
    fail "$package is already on this machine ($status); this test installs and purges it"
done
getent passwd payonce >/dev/null && fail "a payonce user exists already; this test creates and removes it"
[[ ! -e /etc/payonce && ! -e /var/lib/payonce ]] ||
  fail "/etc/payonce or /var/lib/payonce exists already; this test creates and removes them"

work="$(mktemp -d -t payonce-package.XXXXXX)"
packages_before="$work/packages-before"
dpkg-query -W -f='${Package}\n' | sort >"$packages_before"
agent_pid=""

cleanup() {
  local rc=$?
  trap - EXIT
  if [[ -n "$agent_pid" ]] && kill -0 "$agent_pid" 2>/dev/null; then
    kill -KILL "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  for package in payonce-console payonce-agent; do
    if dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null | grep -qv not-installed; then
      note "cleanup: purging $package"
      dpkg --purge "$package" >/dev/null 2>&1 || true
    fi
  done
  # What apt-get -f brought in for the packages goes with them.
  local added
  added="$(comm -13 "$packages_before" <(dpkg-query -W -f='${Package}\n' | sort) | tr '\n' ' ')"
  if [[ -n "${added// /}" ]]; then
    note "cleanup: removing the dependencies installed for the test: $added"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get purge -y $added >/dev/null 2>&1 || true
  fi
  dpkg-statoverride --list /etc/payonce/payonce.json >/dev/null 2>&1 &&
    dpkg-statoverride --remove /etc/payonce/payonce.json
  getent passwd payonce >/dev/null && deluser --system --quiet payonce >/dev/null 2>&1
  getent group payonce >/dev/null && delgroup --system --quiet payonce >/dev/null 2>&1
  rm -rf /etc/payonce /var/lib/payonce "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

note "== build the packages"
mapfile -t debs < <(PAYONCE_BUILD_DIR="$build_dir" "$source_dir/scripts/package.sh" "$work/debs")
[[ ${#debs[@]} -eq 2 ]] || fail "scripts/package.sh made ${#debs[@]} package(s), not 2"
agent_deb="$(printf '%s\n' "${debs[@]}" | grep '/payonce-agent_')"
console_deb="$(printf '%s\n' "${debs[@]}" | grep '/payonce-console_')"

note "== lintian"
lintian --fail-on error "${debs[@]}" 2>&1 | tee "$work/lintian.txt" >&2 ||
  fail "lintian reports errors (above)"
grep -q '^E: ' "$work/lintian.txt" && fail "lintian reports errors (above)"

note "== the packages' fields"
dpkg-deb -f "$agent_deb" Depends | grep -q 'libqt6core6' ||
  fail "payonce-agent's Depends were not computed from its libraries"
dpkg-deb -f "$console_deb" Depends | grep -q 'fonts-noto-cjk' ||
  fail "payonce-console does not depend on fonts-noto-cjk"
dpkg-deb --ctrl-tarfile "$agent_deb" | tar -xO ./conffiles | grep -qx /etc/payonce/payonce.json ||
  fail "/etc/payonce/payonce.json is not a conffile"

note "== dpkg -i"
if ! dpkg -i "${debs[@]}" >&2; then
  note "dpkg -i left dependencies missing: apt-get -f install"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -f install -y >&2
fi
for package in payonce-agent payonce-console; do
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$package")" == installed ]] || fail "$package is not installed"
done

note "== the user, the permissions"
IFS=: read -r _ _ uid gid _ home shell < <(getent passwd payonce) || fail "no payonce user after install"
((uid < 1000)) || fail "payonce is not a system user (uid $uid)"
[[ "$shell" == /usr/sbin/nologin && "$home" == /var/lib/payonce ]] || fail "payonce: home $home, shell $shell"
expect_stat() {
  local path="$1" want="$2" got
  got="$(stat -c '%a %U:%G' "$path")"
  [[ "$got" == "$want" ]] || fail "$path is $got, not $want"
}
expect_stat /etc/payonce/payonce.json "640 root:payonce"
expect_stat /var/lib/payonce "750 payonce:payonce"
for file in /usr/bin/payonce-agent /usr/bin/payonce-sim /usr/bin/payonce-console \
            /usr/share/payonce/nginx/payonce.conf /usr/share/payonce/prometheus/payonce-alerts.yml \
            /usr/share/payonce/grafana/payonce.json /usr/share/applications/payonce-console.desktop \
            /usr/share/icons/hicolor/scalable/apps/payonce.svg; do
  [[ -e "$file" ]] || fail "$file was not installed"
done

note "== systemd-analyze verify"
unit=/lib/systemd/system/payonce-agent.service
systemd-analyze verify "$unit" >"$work/verify.txt" 2>&1 || { cat "$work/verify.txt" >&2; fail "systemd-analyze verify failed"; }
if grep -q 'payonce-agent' "$work/verify.txt"; then cat "$work/verify.txt" >&2; fail "systemd-analyze verify warns about the unit"; fi

note "== the installed agent as payonce"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
token="package-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
hash="$(printf %s "$token" | sha256sum | cut -c1-64)"
# The secrets file the unit reads, made as docs/operations.md says.
install -m 0640 -o root -g payonce /dev/null /etc/payonce/payonce.env
printf 'PAYONCE_AUTH_TOKENS=[{"name":"package-test","role":"viewer","sha256":"%s"}]\n' "$hash" >/etc/payonce/payonce.env
# ExecStart as written in the unit (systemd is not PID 1 on build machines), then --listen.
read -r -a exec_start < <(sed -n 's/^ExecStart=//p' "$unit")
[[ "${exec_start[0]}" == /usr/bin/payonce-agent ]] || fail "ExecStart runs ${exec_start[0]}"
(
  cd /var/lib/payonce
  umask 0027
  # As systemd reads an EnvironmentFile: VARIABLE=value, the value as written (not shell).
  while IFS='=' read -r name value; do
    [[ -z "$name" || "$name" == \#* ]] || export "$name=$value"
  done </etc/payonce/payonce.env
  exec setpriv --reuid=payonce --regid=payonce --init-groups --no-new-privs -- \
    "${exec_start[@]}" --listen "127.0.0.1:$port"
) >"$work/agent.log" 2>&1 &
agent_pid=$!
up=0
for _ in $(seq 150); do
  if curl -sf "http://127.0.0.1:$port/healthz" >"$work/healthz.json" 2>/dev/null; then up=1; break; fi
  kill -0 "$agent_pid" 2>/dev/null || break
  sleep 0.2
done
((up)) || { tail -20 "$work/agent.log" >&2; fail "the installed agent did not answer /healthz"; }
grep -q '"status":"up"' "$work/healthz.json" || fail "/healthz answered $(cat "$work/healthz.json")"
code="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/breakers")"
[[ "$code" == 200 ]] || fail "GET /api/v1/breakers with the env file's token answered $code"
[[ "$(ps -o user= -p "$(pgrep -P "$agent_pid" -x payonce-agent || echo "$agent_pid")")" == payonce ]] ||
  fail "the agent does not run as payonce"
# The agent creates its SQLite file owner-only (0600), whatever the unit's UMask.
expect_stat /var/lib/payonce/payonce.db "600 payonce:payonce"
kill -TERM "$agent_pid"
agent_rc=0
wait "$agent_pid" || agent_rc=$?
agent_pid=""
[[ $agent_rc -eq 0 ]] || { tail -20 "$work/agent.log" >&2; fail "the agent exited $agent_rc on SIGTERM"; }
note "agent answered on 127.0.0.1:$port as payonce and stopped cleanly"

note "== dpkg --purge"
dpkg --purge payonce-console payonce-agent >&2
getent passwd payonce >/dev/null && fail "the payonce user is still there after purge"
getent group payonce >/dev/null && fail "the payonce group is still there after purge"
for path in /etc/payonce /var/lib/payonce /usr/share/payonce /usr/bin/payonce-agent /usr/bin/payonce-console \
            "$unit" /etc/systemd/system/multi-user.target.wants/payonce-agent.service \
            /var/lib/systemd/deb-systemd-helper-enabled/payonce-agent.service.dsh-also; do
  [[ ! -e "$path" ]] || fail "$path is still there after purge"
done
dpkg-statoverride --list | grep -q payonce && fail "a payonce statoverride is still there after purge"
note "PASS: built, lintian clean, installed, ran as payonce, purged without a trace"
