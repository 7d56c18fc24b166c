#!/usr/bin/env bash
# Builds (scripts/setup.sh) and starts the agent on the embedded default (SQLite in
# ./payonce-data, the embedded key store, 127.0.0.1:8080). Arguments go to the agent:
# scripts/demo.sh --listen 127.0.0.1:9000. Until the demo itself exists, this starts the agent.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PAYONCE_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh" >&2

agent="$build_dir/agent/app/payonce-agent"
if [[ ! -x "$agent" ]]; then
  echo "demo: $agent was not built; see the output of scripts/setup.sh above" >&2
  exit 1
fi
cd "$root"
exec "$agent" "$@"
