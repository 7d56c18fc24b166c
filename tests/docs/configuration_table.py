#!/usr/bin/env python3
"""The settings table of docs/configuration.md, made from `payonce-agent --help`.

The agent's --help is itself generated from its settings table (agent/config/
configoptions.cpp), so this table cannot drift from the code:
    configuration_table.py check  PAYONCE_AGENT docs/configuration.md   (ctest: tst_configuration_doc)
    configuration_table.py update PAYONCE_AGENT docs/configuration.md   (rewrites the table)
check fails when the table between the BEGIN/END markers is not what --help says now:
a setting added, renamed, re-described or with another default.
"""
import re
import subprocess
import sys

BEGIN = "<!-- BEGIN settings: made by tests/docs/configuration_table.py from payonce-agent --help; do not edit by hand -->"
END = "<!-- END settings -->"
INDENT = 32


def help_entries(agent):
    text = subprocess.run([agent, "--help"], capture_output=True, text=True, check=True, timeout=30).stdout
    entries, current, section = [], None, None
    for line in text.splitlines():
        if line.startswith("Options:"):
            section = "flags"
            continue
        if line.startswith("Environment only"):
            section = "env"
            continue
        if section is None or not line.strip():
            continue
        if line.startswith(" " * INDENT):
            current["text"] = (current["text"] + " " + line.strip()).strip()
        elif line.startswith("  ") and line[2] != " ":
            # The option (with its value name) or the variable, then its text: after the
            # padding to INDENT, after one space when the option is too long for its column,
            # or on the next line (at INDENT) when the option takes the whole line.
            m = re.match(r"^  ((?:-\w, )?--[a-z0-9-]+(?: [A-Z][A-Z:]*)?|PAYONCE_[A-Z0-9_]+)(?: +(.*))?$", line)
            if not m:
                sys.exit("unexpected --help line: %r" % line)
            current = {"section": section, "left": m.group(1), "text": (m.group(2) or "").strip()}
            entries.append(current)
        else:
            sys.exit("unexpected --help line: %r" % line)
    return entries


def rows(entries):
    out = []
    pattern = re.compile(r"^(?P<what>.*?)(?: Key: (?P<key>[a-z0-9_.]+)\.)?(?: Env: (?P<env>PAYONCE_[A-Z0-9_]+)\.)?"
                         r"(?: Default: (?P<default>.*)\.)?$")
    for e in entries:
        m = pattern.match(e["text"])
        if e["section"] == "flags":
            names = e["left"].split()
            flag = names[0] if names[0].startswith("--") else names[-1]
            flag = " ".join([flag] + [n for n in names[1:] if not n.startswith("-")])
            if flag.split()[0].rstrip(",") in ("-h", "--help", "-v", "--version", "--list-routes") or not m["env"]:
                continue
            env = m["env"]
        else:
            flag, env = "", e["left"]
        out.append({"key": m["key"] or "", "flag": flag, "env": env, "default": m["default"],
                    "what": m["what"]})
    return out


def cell(text):
    return text.replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")


def code(text):
    return "`%s`" % text if text else ""


def table(agent):
    lines = ["| Key | Flag | Environment | Default | What it does |", "|---|---|---|---|---|"]
    for r in rows(help_entries(agent)):
        default = r["default"]
        default = "" if default is None else ("(none)" if default == "(none)" else code(default))
        lines.append("| %s | %s | %s | %s | %s |" % (code(r["key"]), code(r["flag"]), code(r["env"]), default,
                                                 cell(r["what"])))
    return "\n".join(lines)


def main():
    mode, agent, doc = sys.argv[1:4]
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit("%s has no BEGIN/END settings markers" % doc)
    current = text[start + len(BEGIN):end].strip("\n")
    wanted = table(agent)
    if mode == "update":
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text[:start + len(BEGIN)] + "\n" + wanted + "\n" + text[end:])
        return 0
    if current == wanted:
        print("%s: the settings table matches --help (%d settings)" % (doc, len(wanted.splitlines()) - 2))
        return 0
    have, want = set(current.splitlines()), set(wanted.splitlines())
    for line in sorted(want - have):
        print("missing or different in %s: %s" % (doc, line))
    for line in sorted(have - want):
        print("not what --help says: %s" % line)
    print("run: tests/docs/configuration_table.py update %s %s" % (agent, doc))
    return 1


if __name__ == "__main__":
    sys.exit(main())
