#!/usr/bin/env bash
# Builds (scripts/setup.sh) and starts the agent on the embedded default — SQLite in
# ./payonce-data, the embedded key store, 127.0.0.1:8080 — with the simulated WeChat Pay /
# Alipay platform beside it (sim.enabled: payonce-sim on 127.0.0.1:8090, merchant and
# platform keys generated on first use) and QA scenarios on (qa.enabled). It runs a mixed
# QA scenario (a concurrent burst, a retry storm, a queue redelivery and a confirm
# replayed after a gateway timeout), prints how many duplicates each layer intercepted and
# the invariant report computed by SQL, then keeps the agent running and prints a fresh
# operator token and the calls that pay an order once. With a display ($DISPLAY or
# $WAYLAND_DISPLAY) and build/console/payonce-console built, it then opens the console
# connected to the agent with that token (PAYONCE_CONSOLE_TOKEN, never on a command line);
# without one it prints how to start the console by hand. Ctrl-C stops everything it
# started — the agent (and its payonce-sim), the console, the redis-server.
#
#   scripts/demo.sh [--with-redis] [--orders N] [agent arguments...]
#     --with-redis  a local redis-server (a temporary folder, loopback, a free port)
#                   instead of the embedded key store
#     --orders N    orders in the scenario (default 40)
#   e.g. scripts/demo.sh --listen 127.0.0.1:9000
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PAYONCE_BUILD_DIR:-$root/build}"

with_redis=0
orders=40
agent_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --with-redis) with_redis=1; shift ;;
    --orders) orders="$2"; shift 2 ;;
    *) agent_args+=("$1"); shift ;;
  esac
done

"$root/scripts/setup.sh" >&2

agent="$build_dir/agent/app/payonce-agent"
if [[ ! -x "$agent" ]]; then
  echo "demo: $agent was not built; see the output of scripts/setup.sh above" >&2
  exit 1
fi

# Where the agent listens: the last --listen among the arguments, else the default.
listen="127.0.0.1:8080"
for ((i = 0; i < ${#agent_args[@]}; i++)); do
  [[ "${agent_args[$i]}" == --listen ]] && listen="${agent_args[$((i + 1))]:-$listen}"
  [[ "${agent_args[$i]}" == --listen=* ]] && listen="${agent_args[$i]#--listen=}"
done
base="http://$listen"

agent_pid=""
console_pid=""
redis_pid=""
redis_dir=""
stop_all() {
  trap - INT TERM EXIT
  # A background job of a script ignores SIGINT, so the console is told to go by TERM.
  if [[ -n "$console_pid" ]] && kill -0 "$console_pid" 2>/dev/null; then
    kill -TERM "$console_pid" 2>/dev/null || true
    wait "$console_pid" 2>/dev/null || true
  fi
  if [[ -n "$agent_pid" ]] && kill -0 "$agent_pid" 2>/dev/null; then
    kill -TERM "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  if [[ -n "$redis_pid" ]] && kill -0 "$redis_pid" 2>/dev/null; then
    kill -TERM "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  [[ -n "$redis_dir" ]] && rm -rf "$redis_dir"
  echo "demo: stopped" >&2
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A token for this run only: the agent stores its SHA-256, never the token.
token="demo-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
hash="$(printf %s "$token" | sha256sum | cut -c1-64)"
# The QA runner's own credential (qa.token), an operator token: the demo's token never
# leaves the agent.
qa_token="qa-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
qa_hash="$(printf %s "$qa_token" | sha256sum | cut -c1-64)"
export PAYONCE_AUTH_TOKENS="[{\"name\":\"demo\",\"role\":\"approver\",\"sha256\":\"$hash\"},{\"name\":\"qa\",\"role\":\"operator\",\"sha256\":\"$qa_hash\"}]"
export PAYONCE_QA_TOKEN="$qa_token"
export PAYONCE_SIM_ENABLED=true
export PAYONCE_QA_ENABLED=true

if [[ $with_redis == 1 ]]; then
  redis_dir="$(mktemp -d -t payonce-demo-redis.XXXXXX)"
  redis_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$redis_dir" --save "" --appendonly no \
    --logfile "$redis_dir/redis.log" &
  redis_pid=$!
  for _ in $(seq 50); do
    redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  export PAYONCE_REDIS="redis://127.0.0.1:$redis_port/0"
  echo "demo: redis-server on 127.0.0.1:$redis_port (pid $redis_pid, in $redis_dir)" >&2
fi

cd "$root"
mkdir -p payonce-data
log="$root/payonce-data/demo-agent.log"
echo "demo: starting the agent on $base (its log: $log)" >&2
"$agent" "${agent_args[@]}" >"$log" 2>&1 &
agent_pid=$!
for _ in $(seq 300); do
  curl -sf "$base/healthz" >/dev/null 2>&1 && break
  kill -0 "$agent_pid" 2>/dev/null || { echo "demo: the agent exited:" >&2; tail -5 "$log" >&2; exit 1; }
  sleep 0.2
done
curl -sf "$base/healthz" >/dev/null || { echo "demo: the agent did not answer on $base" >&2; exit 1; }
sim_pid="$(pgrep -P "$agent_pid" -x payonce-sim || true)"
echo "demo: payonce-agent pid $agent_pid${sim_pid:+, its payonce-sim pid $sim_pid}" >&2

auth=(-H "Authorization: Bearer $token")
scenario="{\"kind\":\"mixed\",\"orders\":$orders,\"duplicates\":5,\"concurrency\":8,\"time_scale\":0.001,\"reason\":\"demo\"}"
started="$(curl -sf -XPOST "$base/api/v1/qa/scenarios" "${auth[@]}" -d "$scenario")"
id="$(python3 -c 'import json, sys; print(json.load(sys.stdin)["scenario_id"])' <<<"$started")"
echo >&2
echo "demo: QA scenario $id: mixed, $orders orders: each notification 5 times (burst, storm)," \
     "order.paid delivered twice, confirms replayed after a gateway timeout" >&2
last_phase=""
while :; do
  run="$(curl -sf "$base/api/v1/qa/scenarios/$id" "${auth[@]}")"
  phase="$(python3 -c 'import json, sys; r = json.load(sys.stdin); print((r.get("progress") or {}).get("phase", ""), r["status"])' <<<"$run")"
  if [[ "$phase" != "$last_phase" ]]; then
    echo "demo:   ${phase% *}" >&2
    last_phase="$phase"
  fi
  [[ "${phase##* }" != running ]] && break
  sleep 0.5
done

python3 - "$run" <<'REPORT' >&2
import json, sys
run = json.loads(sys.argv[1])
report = run.get("report") or {}
progress = run.get("progress") or {}
print()
print("Duplicates intercepted, by layer")
print("  %-22s %10s %10s" % ("layer", "callbacks", "confirms"))
callbacks = report.get("by_layer", {})
confirms = report.get("confirm_layers", progress.get("confirm_layers", {}))
order = ["none", "idempotency_key", "token", "lock", "unique_index", "state_machine", "side_effect", "rejected"]
for layer in order + sorted((set(callbacks) | set(confirms)) - set(order)):
    if layer in callbacks or layer in confirms:
        print("  %-22s %10s %10s" % (layer, callbacks.get(layer, "-"), confirms.get(layer, "-")))
print("  none = processed for the first time; <layer>/<status> = a confirm answered other than 200")
print("  (none/503: the gateway timed out; idempotency_key/503: that answer replayed from the L1 record)")
print()
print("Invariant report (SQL over the scenario's orders)")
rows = [("orders", report.get("orders")), ("notifications delivered", report.get("deliveries")),
        ("PAID exactly once", report.get("paid_once")), ("double effects", report.get("double_effects")),
        ("missing effects", report.get("missing_effects")), ("lost payments", report.get("lost")),
        ("order.paid redelivered", progress.get("outbox_redelivered")),
        ("notification re-sends", progress.get("redeliveries"))]
for name, value in rows:
    print("  %-26s %8s" % (name, value))
print("  %-26s %8s" % ("result", run.get("status", "?").upper()))
if progress.get("error"):
    print("  error: " + progress["error"])
REPORT

# With a display, the console connected here. The token goes in its environment, which it
# reads once and never stores (a command line would show it to every user's ps).
console="$build_dir/console/payonce-console"
console_log="$root/payonce-data/demo-console.log"
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x "$console" ]]; then
  PAYONCE_CONSOLE_TOKEN="$token" "$console" --url "$base" >"$console_log" 2>&1 &
  console_pid=$!
  sleep 1
  if kill -0 "$console_pid" 2>/dev/null; then
    echo "demo: payonce-console pid $console_pid is open on $base (its log: $console_log)" >&2
  else
    console_pid=""
    echo "demo: payonce-console did not start:" >&2
    tail -5 "$console_log" >&2
  fi
fi
if [[ -z "$console_pid" ]]; then
  if [[ -x "$console" ]]; then
    echo "demo: no display; on one, the console connects with:" >&2
  else
    echo "demo: $console was not built; once built, the console connects with:" >&2
  fi
  echo "  PAYONCE_CONSOLE_TOKEN=$token $console --url $base" >&2
fi

cat >&2 <<TRY

demo: the agent keeps running on $base, its log in $log
demo: Ctrl-C stops it and everything the demo started.
demo: operator token for this run: $token
demo: try, in another terminal:
  T=$token
  curl -s $base/api/v1/qa/scenarios/$id -H "Authorization: Bearer \$T"
  curl -s -XPUT  $base/api/v1/skus/SKU1 -H "Authorization: Bearer \$T" -d '{"stock":100}'
  curl -s -XPOST $base/api/v1/orders -H "Authorization: Bearer \$T" \\
       -d '{"order_no":"ORD001","user_id":10086,"amount":"99.00","items":[{"sku_id":"SKU1","qty":1}]}'
  TOKEN=\$(curl -s -XPOST $base/api/v1/payments/token -H 'X-User-Id: 10086' -d '{"order_no":"ORD001"}' | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
  for i in 1 2 3; do curl -s -i -XPOST $base/api/v1/payments/confirm -H 'X-User-Id: 10086' \\
       -H 'Idempotency-Key: click-1' -d "{\"token\":\"\$TOKEN\",\"order_no\":\"ORD001\",\"channel\":\"wechat\"}" | grep -E '^HTTP|X-Payonce-Layer|Idempotent'; done
TRY
wait "$agent_pid"
