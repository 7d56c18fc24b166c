#!/usr/bin/env python3
"""Checks that the Grafana dashboard and the Prometheus alert rules name only metrics,
labels and label values that a running payonce-agent exports on GET /metrics, and that
every expression passes `promtool check rules` as a recording rule.

    metric_references.py check AGENT_BINARY DASHBOARD_JSON ALERT_RULES_YML
        starts the agent (SQLite in a temporary folder, a free loopback port), scrapes
        /metrics once, stops it, checks both files; exit 1 naming every bad reference.

The PromQL is read with a small tokenizer, enough for what these files use: a metric is
an identifier starting with payonce_, a matcher is NAME OP "VALUE" inside {}, grouping
labels are the ones in by (...) / without (...). Grafana's variables are replaced by
values Prometheus accepts before promtool sees an expression."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

# Labels Prometheus adds when it scrapes, and the one histogram_quantile reads.
SCRAPE_LABELS = {"instance", "job", "le"}
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$instance": ".*"}

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+')
_LABEL_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_METRIC = re.compile(r'\b(payonce_[a-zA-Z0-9_:]*)\s*(\{[^}]*\})?')
_MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_GROUPING = re.compile(r'\b(?:by|without)\s*\(([^)]*)\)')
_LITERAL_ALTERNATION = re.compile(r'^[A-Za-z0-9_./<>-]+(\|[A-Za-z0-9_./<>-]+)*$')


def parse_exposition(text):
    """{metric sample name: {label: set of values}} from Prometheus text format 0.0.4."""
    exported = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if not match:
            continue
        labels = exported.setdefault(match.group(1), {})
        for name, value in _LABEL_PAIR.findall(match.group(2) or ""):
            labels.setdefault(name, set()).add(value)
    return exported


def expand_grafana(expr):
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def references_problems(where, expr, exported):
    """Every metric, label and label value in expr that the agent does not export."""
    problems = []
    metrics = _METRIC.findall(expr)
    if not metrics:
        problems.append(f"{where}: names no payonce metric: {expr}")
    labels_of_expr = set(SCRAPE_LABELS)
    for metric, selector in metrics:
        if metric not in exported:
            problems.append(f"{where}: metric {metric} is not exported")
            continue
        labels = exported[metric]
        labels_of_expr |= set(labels)
        for name, op, value in _MATCHER.findall(selector or ""):
            if name in SCRAPE_LABELS:
                continue
            if name not in labels:
                problems.append(f"{where}: {metric} has no label {name}")
                continue
            if op in ("=", "!="):
                wanted = [value]
            elif _LITERAL_ALTERNATION.match(value):
                wanted = value.split("|")
            else:
                # A real pattern: it must match at least one exported value.
                if not any(re.fullmatch(value, v) for v in labels[name]):
                    problems.append(f"{where}: {metric}{{{name}{op}\"{value}\"}} matches no exported value")
                continue
            for literal in wanted:
                if literal not in labels[name]:
                    problems.append(f"{where}: {metric} exports no {name}=\"{literal}\"")
    for grouping in _GROUPING.findall(expr):
        for label in (part.strip() for part in grouping.split(",")):
            if label and label not in labels_of_expr:
                problems.append(f"{where}: groups by {label}, a label none of its metrics has")
    return problems


def dashboard_expressions(dashboard):
    """(where, expression) for every target of every panel, rows' panels included."""
    found = []
    def walk(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    found.append((f'dashboard panel "{panel.get("title")}" {target.get("refId")}',
                                  expand_grafana(target["expr"])))
            walk(panel.get("panels", []))
    walk(dashboard.get("panels", []))
    return found


def alert_expressions(rules):
    return [(f'alert {rule["alert"]}', rule["expr"])
            for group in rules["groups"] for rule in group["rules"] if "alert" in rule]


def promtool_problems(expressions, promtool="promtool"):
    """Each expression as a recording rule through `promtool check rules`."""
    rules = {"groups": [{"name": "payonce-dashboard", "rules": [
        {"record": f"payonce_dashboard:expr_{i}", "expr": expr} for i, (_, expr) in enumerate(expressions)]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as file:
        yaml.safe_dump(rules, file)
        file.flush()
        result = subprocess.run([promtool, "check", "rules", file.name], capture_output=True, text=True)
    if result.returncode == 0:
        return []
    return [f"promtool check rules refuses the expressions: {result.stdout}{result.stderr}".strip()]


def check(exported, dashboard, rules, promtool="promtool"):
    panels = dashboard_expressions(dashboard)
    alerts = alert_expressions(rules)
    problems = []
    for where, expr in panels + alerts:
        problems += references_problems(where, expr, exported)
    problems += promtool_problems(panels, promtool)
    return problems, len(panels), len(alerts)


def scrape_agent(agent):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as data_dir:
        process = subprocess.Popen([agent, "--listen", f"127.0.0.1:{port}", "--data-dir", data_dir],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   env={k: v for k, v in os.environ.items() if not k.startswith("PAYONCE_")})
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as answer:
                        return answer.read().decode()
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"the agent did not serve /metrics: {process.stderr.read()[-2000:]}")
                    time.sleep(0.2)
        finally:
            process.terminate()
            process.wait(timeout=30)


def main(argv):
    if len(argv) != 5 or argv[1] != "check":
        print(__doc__, file=sys.stderr)
        return 2
    _, _, agent, dashboard_path, rules_path = argv
    exported = parse_exposition(scrape_agent(agent))
    with open(dashboard_path, encoding="utf-8") as file:
        dashboard = json.load(file)
    with open(rules_path, encoding="utf-8") as file:
        rules = yaml.safe_load(file)
    problems, panels, alerts = check(exported, dashboard, rules)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(exported)} exported sample names; {panels} panel expressions, {alerts} alert rules;"
          f" {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
