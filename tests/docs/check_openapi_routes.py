#!/usr/bin/env python3
"""docs/openapi.yaml against the agent, both ways.

Starts `payonce-agent --list-routes` (qa.enabled, a throwaway SQLite folder, a free
loopback port), reads the routes it registered, and fails when
- a route is served that the spec lacks, or the spec has a path the agent does not serve;
- a route's role differs from the operation's x-payonce-role, or a route without a role
  is not marked `security: []` in the spec (and the other way round);
- the WebSocket route is not the operation marked x-payonce-websocket;
- the error codes of agent/http/errormapping.cpp differ from the spec's ErrorCode enum.

Usage: check_openapi_routes.py PAYONCE_AGENT OPENAPI_YAML ERRORMAPPING_CPP
"""
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

import yaml

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_routes(agent):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYONCE_")}
    env["PAYONCE_QA_ENABLED"] = "true"
    # QA needs a simulated platform: one on loopback, never called by --list-routes.
    env["PAYONCE_WECHAT_BASE_URL"] = "http://127.0.0.1:%d" % free_port()
    # ... and a token of its own, an operator's.
    env["PAYONCE_QA_TOKEN"] = "routes-qa-token"
    env["PAYONCE_AUTH_TOKENS"] = json.dumps(
        [{"name": "qa", "role": "operator", "sha256": hashlib.sha256(b"routes-qa-token").hexdigest()}])
    with tempfile.TemporaryDirectory(prefix="payonce-routes-") as data_dir:
        run = subprocess.run(
            [agent, "--list-routes", "--listen", "127.0.0.1:%d" % free_port(), "--data-dir", data_dir],
            env=env, capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        sys.exit("payonce-agent --list-routes failed (%d):\n%s" % (run.returncode, run.stderr))
    routes = {}
    for line in run.stdout.splitlines():
        fields = line.split()
        if len(fields) not in (3, 4):
            sys.exit("unexpected --list-routes line: %r" % line)
        routes[(fields[0], fields[1])] = {"role": fields[2], "websocket": len(fields) == 4}
    if not routes:
        sys.exit("payonce-agent --list-routes listed no route")
    return routes


def spec_routes(spec):
    routes = {}
    for path, item in spec["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            routes[(method.upper(), path)] = {
                "role": operation.get("x-payonce-role"),
                "websocket": "x-payonce-websocket" in operation,
                "open": operation.get("security") == [],
            }
    return routes


def main():
    agent, spec_path, errormapping = sys.argv[1:4]
    with open(spec_path, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    served = served_routes(agent)
    documented = spec_routes(spec)
    problems = []
    for key in sorted(served.keys() - documented.keys()):
        problems.append("served but not in %s: %s %s" % (spec_path, *key))
    for key in sorted(documented.keys() - served.keys()):
        problems.append("in %s but not served: %s %s" % (spec_path, *key))
    for key in sorted(served.keys() & documented.keys()):
        s, d = served[key], documented[key]
        name = "%s %s" % key
        if s["role"] != d["role"]:
            problems.append("%s: the agent wants role %s, x-payonce-role says %s" % (name, s["role"], d["role"]))
        if (s["role"] == "none") != d["open"]:
            problems.append("%s: role %s, so `security: []` must be %s" %
                            (name, s["role"], "set" if s["role"] == "none" else "absent"))
        if s["websocket"] != d["websocket"]:
            problems.append("%s: WebSocket %s in the agent, x-payonce-websocket %s in the spec" %
                            (name, s["websocket"], d["websocket"]))

    with open(errormapping, encoding="utf-8") as f:
        codes = set(re.findall(r'ApiCodeStatus\{u"([a-z_]+)", \d+\}', f.read()))
    enum = set(spec["components"]["schemas"]["ErrorCode"]["enum"])
    for code in sorted(codes - enum):
        problems.append("error code %s (errormapping.cpp) is not in ErrorCode" % code)
    for code in sorted(enum - codes):
        problems.append("ErrorCode %s is not a code of errormapping.cpp" % code)

    if problems:
        print("\n".join(problems))
        return 1
    print("%d routes served, %d documented, all matching; %d error codes" % (len(served), len(documented), len(codes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
