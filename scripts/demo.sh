#!/usr/bin/env bash
# Builds (scripts/setup.sh) and starts the agent on the embedded default — SQLite in
# ./payonce-data, the embedded key store, 127.0.0.1:8080 — with the simulated WeChat Pay /
# Alipay platform beside it (sim.enabled: payonce-sim on 127.0.0.1:8090, merchant and
# platform keys generated on first use). It prints a fresh operator token and the calls
# that pay an order once. Ctrl-C stops the agent and the simulator.
# Until the full demo exists (QA scenario, per-layer report, console), this is it.
# Arguments go to the agent: scripts/demo.sh --listen 127.0.0.1:9000
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PAYONCE_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh" >&2

agent="$build_dir/agent/app/payonce-agent"
if [[ ! -x "$agent" ]]; then
  echo "demo: $agent was not built; see the output of scripts/setup.sh above" >&2
  exit 1
fi

# A token for this run only: the agent stores its SHA-256, never the token.
token="demo-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
hash="$(printf %s "$token" | sha256sum | cut -c1-64)"
export PAYONCE_AUTH_TOKENS="[{\"name\":\"demo\",\"role\":\"approver\",\"sha256\":\"$hash\"}]"
export PAYONCE_SIM_ENABLED=true

cat >&2 <<TRY
demo: operator token for this run: $token
demo: try, in another terminal:
  T=$token
  curl -s -XPUT  localhost:8080/api/v1/skus/SKU1 -H "Authorization: Bearer \$T" -d '{"stock":100}'
  curl -s -XPOST localhost:8080/api/v1/orders -H "Authorization: Bearer \$T" \\
       -d '{"order_no":"ORD001","user_id":10086,"amount":"99.00","items":[{"sku_id":"SKU1","qty":1}]}'
  TOKEN=\$(curl -s -XPOST localhost:8080/api/v1/payments/token -H 'X-User-Id: 10086' -d '{"order_no":"ORD001"}' | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
  for i in 1 2 3; do curl -s -i -XPOST localhost:8080/api/v1/payments/confirm -H 'X-User-Id: 10086' \\
       -H 'Idempotency-Key: click-1' -d "{\"token\":\"\$TOKEN\",\"order_no\":\"ORD001\",\"channel\":\"wechat\"}" | grep -E '^HTTP|X-Payonce-Layer|Idempotent'; done
TRY
cd "$root"
exec "$agent" "$@"
