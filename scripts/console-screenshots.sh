#!/usr/bin/env bash
# Pictures of payonce-console with realistic data. Starts the demo stack — payonce-agent
# with the simulated WeChat Pay / Alipay (sim.enabled), as scripts/demo.sh does, but in a
# temporary folder on free ports so it never meets a running demo — and payonce-console
# under Xvfb, with QA scenarios on (qa.enabled). While the console watches, the agent runs
# a mixed QA scenario (POST /api/v1/qa/scenarios: a concurrent burst, a retry storm, a
# queue redelivery, confirms replayed after a gateway timeout — the interception of real
# duplicate traffic), then by hand on the scenario's orders: a replay, the Alipay breaker
# forced open, compensations proposed by two people and one approved by the other, extra
# points written behind the agent's back and found by a reconciliation run. The console
# (--screenshot) saves dashboard.png, callbacks.png, breakers.png and compensations.png.
# Usage: scripts/console-screenshots.sh [OUT_DIR]   (default: build/console-screenshots)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PAYONCE_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh" >&2
out="$(realpath -m "${1:-$build_dir/console-screenshots}")"
agent="$build_dir/agent/app/payonce-agent"
console="$build_dir/console/payonce-console"
for binary in "$agent" "$console"; do
  [[ -x "$binary" ]] || { echo "screenshots: $binary was not built" >&2; exit 1; }
done

work="$(mktemp -d)"
agent_pid=""
console_pid=""
cleanup() {
  [[ -n "$console_pid" ]] && kill "$console_pid" 2>/dev/null || true
  [[ -n "$agent_pid" ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
sim_port="$(free_port)"
base="http://127.0.0.1:$port"

# Two people for this run only (the agent stores SHA-256s, never tokens): desk proposes
# and acts, lead approves.
new_token() { echo "$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
sha() { printf %s "$1" | sha256sum | cut -c1-64; }
desk="$(new_token desk)"
lead="$(new_token lead)"
export PAYONCE_AUTH_TOKENS="[{\"name\":\"desk\",\"role\":\"operator\",\"sha256\":\"$(sha "$desk")\"},{\"name\":\"lead\",\"role\":\"approver\",\"sha256\":\"$(sha "$lead")\"}]"
export PAYONCE_SIM_ENABLED=true PAYONCE_SIM_LISTEN="127.0.0.1:$sim_port" PAYONCE_QA_ENABLED=true
export PAYONCE_LISTEN="127.0.0.1:$port" PAYONCE_DATA_DIR="$work/data"

"$agent" >"$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 1 120); do
  curl -sf "$base/readyz" >/dev/null 2>&1 && break
  kill -0 "$agent_pid" 2>/dev/null || { cat "$work/agent.log" >&2; exit 1; }
  sleep 0.5
done
curl -sf "$base/readyz" >/dev/null || { echo "screenshots: the agent did not become ready" >&2; cat "$work/agent.log" >&2; exit 1; }

api() { # METHOD PATH TOKEN [JSON]
  curl -sS -X "$1" "$base$2" -H "Authorization: Bearer $3" -H 'Content-Type: application/json' ${4:+-d "$4"}
}
sim() { curl -sS -X POST "http://127.0.0.1:$sim_port$1" -H 'Content-Type: application/json' -d "$2" >/dev/null; }
field() { sed -n "s/.*\"$1\":\"\\{0,1\\}\\([^\",}]*\\).*/\\1/p"; }

sim /sim/notify-config '{"time_scale":0.001}'

# The scenario first, so its order numbers are known when the console starts. Its orders
# are <id>-<b|r|m|g>-NNNNN, dealt out in turn: b-00001 a burst order (5 copies at once),
# r-00002 a storm order, m-00003 a queue-redelivery order, g-00004 a gateway-replay order.
orders=48
scenario="{\"kind\":\"mixed\",\"orders\":$orders,\"duplicates\":5,\"concurrency\":4,\"time_scale\":0.01,\"reason\":\"QA run for the console pictures\"}"
id="$(api POST /api/v1/qa/scenarios "$desk" "$scenario" | field scenario_id)"
[[ -n "$id" ]] || { echo "screenshots: the QA scenario did not start" >&2; exit 1; }
echo "screenshots: QA scenario $id (mixed, $orders orders); console under Xvfb, pictures in $out" >&2
PAYONCE_CONSOLE_TOKEN="$lead" xvfb-run -a -s "-screen 0 1280x860x24" \
  "$console" --url "$base" --screenshot "$out" --screenshot-order "$id-b-00001" --screenshot-after 40 \
  >"$work/console.log" 2>&1 &
console_pid=$!

status=""
for _ in $(seq 1 240); do
  status="$(api GET "/api/v1/qa/scenarios/$id" "$desk" | field status)"
  [[ "$status" != running ]] && break
  sleep 0.5
done
echo "screenshots: QA scenario $id $status" >&2
[[ "$status" == passed ]] || { api GET "/api/v1/qa/scenarios/$id" "$desk" >&2; exit 1; }

pay_no="$(api GET "/api/v1/callbacks?order_no=$id-b-00001" "$desk" | field pay_no | head -1)"
[[ -n "$pay_no" ]] && api POST "/api/v1/callbacks/wechat/$pay_no/replay" "$desk" '{"reason":"platform asked to confirm, ticket 4711"}' >/dev/null
api POST /api/v1/breakers/gateway.alipay "$desk" \
  '{"mode":"forced_open","reason":"Alipay timeouts since 14:05, INC-42","expires_in":1800}' >/dev/null
proposed="$(api POST /api/v1/compensations "$desk" "{\"kind\":\"freeze_coupon\",\"order_no\":\"$id-r-00002\",\"reason\":\"coupon granted twice, INC-42\"}" | field id)"
api POST /api/v1/compensations "$lead" "{\"kind\":\"reverse_points\",\"order_no\":\"$id-m-00003\",\"reason\":\"points granted twice?\"}" >/dev/null
api POST /api/v1/compensations "$desk" "{\"kind\":\"restore_stock\",\"order_no\":\"$id-g-00004\",\"reason\":\"stock deducted twice?\"}" >/dev/null
[[ -n "$proposed" ]] && api POST "/api/v1/compensations/$proposed/approve" "$lead" '{"reason":"checked the coupon ledger"}' >/dev/null
# A bug's trace for the patrol to find: points granted a second time by a path that went
# around the side-effect keys (written straight into the demo's SQLite file).
python3 - "$work/data/payonce.db" "$id-b-00005" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
           "SELECT order_no, user_id, 'reward-replayed', 100, 1, 5 FROM orders WHERE order_no = ?", (sys.argv[2],))
db.commit()
PY
api POST /api/v1/reconciliation/run "$desk" '{"reason":"points complaint from user 700004"}' >/dev/null

status=0
wait "$console_pid" || status=$?
console_pid=""
cat "$work/console.log" >&2
if [[ $status -ne 0 ]]; then
  echo "screenshots: payonce-console failed ($status)" >&2
  exit "$status"
fi
ls -l "$out"/dashboard.png "$out"/callbacks.png "$out"/breakers.png "$out"/compensations.png
