#!/usr/bin/env bash
# Pictures of payonce-console with realistic data. Starts the demo stack — payonce-agent
# with the simulated WeChat Pay / Alipay (sim.enabled), as scripts/demo.sh does, but in a
# temporary folder on free ports so it never meets a running demo — and payonce-console
# under Xvfb, with QA scenarios on (qa.enabled). While the console watches, the agent runs
# a mixed QA scenario (POST /api/v1/qa/scenarios: a concurrent burst, a retry storm, a
# queue redelivery, confirms replayed after a gateway timeout — the interception of real
# duplicate traffic), then by hand on the scenario's orders: a replay, the Alipay breaker
# forced open, compensations proposed by two people and one approved by the other, extra
# points written behind the agent's back and found by a reconciliation run; then a QA retry
# storm of 40 orders with the lock switched off, the order.paid webhook pointed at a
# receiver that is down (every event dead after 4 attempts, one re-driven), an idempotency
# record left in_flight by a request that died 10 minutes ago, and accept-only switched on
# with three paid callbacks waiting. Two consoles watch at once, one in English
# (LANG=C.UTF-8) and one in Simplified Chinese (LANG=zh_CN.UTF-8, the language taken from the
# locale as a desk's machine would give it; fonts-noto-cjk draws it), each with settings of
# its own in the temporary folder (a language chosen in View → Language elsewhere does not
# leak in). Each (--screenshot) saves, into OUT_DIR/en and OUT_DIR/zh_CN, dashboard.png,
# callbacks.png, breakers.png, compensations.png, qa.png (the storm's report), audit.png
# (everything above with its actors), keys.png, locks.png, outbox.png, incident.png and
# wall.png (the wall screen).
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
console_pids=()
receiver_pid=""
cleanup() {
  [[ -n "$receiver_pid" ]] && kill "$receiver_pid" 2>/dev/null || true
  local pid
  for pid in "${console_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [[ -n "$agent_pid" ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
sim_port="$(free_port)"
webhook_port="$(free_port)" # the order.paid receiver: up for the mixed scenario, then down
base="http://127.0.0.1:$port"

# Two people for this run only (the agent stores SHA-256s, never tokens): desk proposes
# and acts, lead approves.
new_token() { echo "$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
sha() { printf %s "$1" | sha256sum | cut -c1-64; }
desk="$(new_token desk)"
lead="$(new_token lead)"
qa="$(new_token qa)" # the QA runner's own credential (qa.token): an operator token of its own
export PAYONCE_AUTH_TOKENS="[{\"name\":\"desk\",\"role\":\"operator\",\"sha256\":\"$(sha "$desk")\"},{\"name\":\"lead\",\"role\":\"approver\",\"sha256\":\"$(sha "$lead")\"},{\"name\":\"qa\",\"role\":\"operator\",\"sha256\":\"$(sha "$qa")\"}]"
export PAYONCE_QA_TOKEN="$qa"
export PAYONCE_SIM_ENABLED=true PAYONCE_SIM_LISTEN="127.0.0.1:$sim_port" PAYONCE_QA_ENABLED=true
export PAYONCE_LISTEN="127.0.0.1:$port" PAYONCE_DATA_DIR="$work/data"
export PAYONCE_OUTBOX_WEBHOOK_URLS="[\"http://127.0.0.1:$webhook_port/hooks/paid\"]" PAYONCE_OUTBOX_MAX_ATTEMPTS=4

# The webhook receiver answers 200 while the mixed scenario runs (its queue-redelivery part
# waits for the order.paid events to be delivered), and is stopped afterwards.
python3 - "$webhook_port" <<'PY' &
import http.server, sys
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
PY
receiver_pid=$!

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
api PUT /api/v1/skus/SKU-SHOT "$desk" '{"stock":1000}' >/dev/null
pay() { # ORDER_NO USER DUPLICATES
  api POST /api/v1/orders "$desk" \
    "{\"order_no\":\"$1\",\"user_id\":$2,\"amount\":\"99.00\",\"items\":[{\"sku_id\":\"SKU-SHOT\",\"qty\":1}]}" >/dev/null
  local token payment
  token="$(curl -sS -X POST "$base/api/v1/payments/token" -H "X-User-Id: $2" -d "{\"order_no\":\"$1\"}" | field token)"
  for _ in 1 2 3; do # the user's impatient clicks: one payment, two absorbed
    payment="$(curl -sS -X POST "$base/api/v1/payments/confirm" -H "X-User-Id: $2" -H "Idempotency-Key: click-$1" \
      -d "{\"token\":\"$token\",\"order_no\":\"$1\",\"channel\":\"wechat\"}" | field payment_no)"
  done
  sim /sim/faults "{\"channel\":\"wechat\",\"duplicate\":$3}"
  sim /sim/pay "{\"channel\":\"wechat\",\"out_trade_no\":\"$payment\"}"
}

# The scenario first, so its order numbers are known when the console starts. Its orders
# are <id>-<b|r|m|g>-NNNNN, dealt out in turn: b-00001 a burst order (5 copies at once),
# r-00002 a storm order, m-00003 a queue-redelivery order, g-00004 a gateway-replay order.
orders=48
scenario="{\"kind\":\"mixed\",\"orders\":$orders,\"duplicates\":5,\"concurrency\":4,\"time_scale\":0.01,\"reason\":\"QA run for the console pictures\"}"
id="$(api POST /api/v1/qa/scenarios "$desk" "$scenario" | field scenario_id)"
[[ -n "$id" ]] || { echo "screenshots: the QA scenario did not start" >&2; exit 1; }
echo "screenshots: QA scenario $id (mixed, $orders orders); consoles (en, zh_CN) under Xvfb, pictures in $out" >&2
languages=(en zh_CN)
declare -A locale_of=([en]=C.UTF-8 [zh_CN]=zh_CN.UTF-8)
for language in "${languages[@]}"; do
  mkdir -p "$work/config-$language"
  LANG="${locale_of[$language]}" LC_ALL="" XDG_CONFIG_HOME="$work/config-$language" PAYONCE_CONSOLE_TOKEN="$lead" \
    xvfb-run -a -s "-screen 0 1280x860x24" \
    "$console" --url "$base" --screenshot "$out/$language" --screenshot-order "$id-b-00001" \
    --screenshot-key 10089:click-ORD-SHOT-9 --screenshot-after 40 \
    >"$work/console-$language.log" 2>&1 &
  console_pids+=($!)
done

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
# A payment request that died holding its idempotency record ten minutes ago.
import hashlib, time
stuck = int(time.time() * 1000) - 600000
db.execute("INSERT INTO idempotency_keys (user_id, idem_key, fingerprint, status, locked_at, created_at) "
           "VALUES (10089, 'click-ORD-SHOT-9', ?, 'in_flight', ?, ?)",
           (hashlib.sha256(b"ORD-SHOT-9").hexdigest(), stuck, stuck))
db.commit()
PY
api POST /api/v1/reconciliation/run "$desk" '{"reason":"points complaint from user 700004"}' >/dev/null
# QA storms the agent with the lock switched off for the scenario's orders: the unique index
# catches what the lock would have (the QA view's report, the dashboard and the wall).
storm="$(api POST /api/v1/qa/scenarios "$desk" \
  '{"kind":"retry_storm","orders":40,"duplicates":4,"concurrency":8,"time_scale":0.001,"disable_layers":["lock"],"reason":"release 2.3 QA: storm without the lock"}' |
  field scenario_id)"
# It ends before accept-only below would hold its orders back.
for _ in $(seq 1 240); do
  [[ -n "$storm" && "$(api GET "/api/v1/qa/scenarios/$storm" "$desk" | field status)" != running ]] && break
  sleep 0.5
done

# The webhook receiver goes down: two more orders' order.paid events die after 4 attempts;
# one is re-driven (and dies again).
kill "$receiver_pid" 2>/dev/null || true
wait "$receiver_pid" 2>/dev/null || true
receiver_pid=""
for i in 7 8; do
  pay "ORD-SHOT-$i" "$((10080 + i))" 2
done
dead_id=""
for _ in $(seq 1 60); do
  dead_id="$(api GET "/api/v1/outbox?status=dead&limit=1" "$desk" | field id | head -1)"
  [[ -n "$dead_id" ]] && break
  sleep 0.5
done
[[ -n "$dead_id" ]] && api POST "/api/v1/outbox/$dead_id/redrive" "$desk" '{"reason":"receiver restarted?, INC-43"}' >/dev/null

# An incident downstream: accept-only on, and three paid callbacks wait for the drain.
api PUT /api/v1/mode "$desk" '{"callbacks":"accept_only","reason":"points database failing over, INC-44"}' >/dev/null
sleep 1.5 # the agents' cached read of the mode expires
for i in 10 11 12; do
  pay "ORD-SHOT-$i" "$((10080 + i))" 0
  sleep 0.5
done

failed=0
for i in "${!languages[@]}"; do
  status=0
  wait "${console_pids[$i]}" || status=$?
  cat "$work/console-${languages[$i]}.log" >&2
  if [[ $status -ne 0 ]]; then
    echo "screenshots: payonce-console (${languages[$i]}) failed ($status)" >&2
    failed=$status
  fi
done
console_pids=()
[[ $failed -eq 0 ]] || exit "$failed"
for language in "${languages[@]}"; do
  ls -l "$out/$language"/{dashboard,callbacks,breakers,compensations,qa,audit,keys,locks,outbox,incident,wall}.png
done
