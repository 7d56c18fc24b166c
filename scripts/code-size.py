#!/usr/bin/env python3
"""The largest source files and functions of a folder (default: agent/).

    scripts/code-size.py [FOLDER] [--top N] [--max-file 600] [--max-function 80]

A function is found the way .clang-format lays it out: its opening brace alone on a line
(BraceWrapping.AfterFunction) after a line that ends its signature, its body up to the
closing brace at the same indentation. That covers free functions, member functions
defined outside or inside a class, and constructors with initialiser lists; lambdas and
plain blocks are part of the function around them. Lines are counted from the signature's
first line to the closing brace.

Exit 1 when a file or a function is over its limit (the limits are reported, the
offenders listed first), 0 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys

SIGNATURE_END = re.compile(r'(\)|\bconst|\boverride|\bnoexcept|\bfinal|->\s*[\w:<>,\s*&]+)\s*$')
INITIALISER = re.compile(r'^\s*[:,]\s*[\w:]+[({]')


def tracked_sources(folder):
    root = subprocess.run(['git', 'rev-parse', '--show-toplevel'], capture_output=True, text=True,
                          check=True).stdout.strip()
    out = subprocess.run(['git', 'ls-files', '--', folder], capture_output=True, text=True, check=True,
                         cwd=root).stdout.split()
    return root, [f for f in out if f.endswith(('.cpp', '.h'))]


def signature_start(lines, brace_index):
    """The first line of the signature ending just above the brace, or None if it is no function."""
    i = brace_index - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i < 0:
        return None
    # Constructor initialiser lists: skip back over ": a(b)," lines.
    while i > 0 and INITIALISER.match(lines[i]):
        i -= 1
    text = lines[i].rstrip()
    if text.endswith((';', '{', '}')) or text.lstrip().startswith(('//', '*', '/*', '#')):
        return None
    if not SIGNATURE_END.search(text) and not INITIALISER.match(lines[i + 1] if i + 1 < brace_index else ''):
        return None
    # Walk up over the signature's continuation lines (parameters broken over lines).
    start = i
    depth = text.count(')') - text.count('(')
    while depth > 0 and start > 0:
        start -= 1
        depth += lines[start].count(')') - lines[start].count('(')
    # Keywords such as if/for/while/switch/catch mean a control block, not a function.
    head = lines[start].strip()
    if re.match(r'^(if|for|while|switch|catch|else|do|return)\b', head) or head.startswith('}'):
        return None
    return start


def functions_in(path):
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    found = []
    for index, line in enumerate(lines):
        if line.strip() != '{':
            continue
        start = signature_start(lines, index)
        if start is None:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        end = index + 1
        while end < len(lines) and not (lines[end].startswith(indent + '}') and
                                        not lines[end].startswith(indent + '} ') or lines[end] == indent + '}'):
            end += 1
        if end >= len(lines):
            continue
        signature = ' '.join(l.strip() for l in lines[start:index] if not INITIALISER.match(l))
        # The function's name: the first identifier before a "(" that is not a keyword
        # of the return type (decltype(...) f(...)).
        names = [n for n in re.findall(r'([~\w:]+)\s*\(', signature) if n not in ('decltype', 'alignas', 'noexcept')]
        name = names[0] if names else signature
        found.append((end - start + 1, start + 1, name))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('folder', nargs='?', default='agent')
    parser.add_argument('--top', type=int, default=15)
    parser.add_argument('--max-file', type=int, default=600)
    parser.add_argument('--max-function', type=int, default=80)
    args = parser.parse_args()

    root, files = tracked_sources(args.folder)
    sizes = []
    funcs = []
    for f in files:
        path = os.path.join(root, f)
        with open(path, encoding='utf-8', errors='replace') as handle:
            sizes.append((sum(1 for _ in handle), f))
        for length, line, name in functions_in(path):
            funcs.append((length, f'{f}:{line}', name))
    sizes.sort(reverse=True)
    funcs.sort(reverse=True)

    over_files = [s for s in sizes if s[0] > args.max_file]
    over_funcs = [fn for fn in funcs if fn[0] > args.max_function]
    print(f'{len(files)} files, {sum(s for s, _ in sizes)} lines, {len(funcs)} functions in {args.folder}/')
    print(f'\nlargest files (limit {args.max_file} lines; {len(over_files)} over):')
    for lines, f in sizes[: max(args.top, len(over_files))]:
        print(f'  {lines:6} {f}{"   OVER" if lines > args.max_file else ""}')
    print(f'\nlongest functions (limit {args.max_function} lines; {len(over_funcs)} over):')
    for length, where, name in funcs[: max(args.top, len(over_funcs))]:
        print(f'  {length:6} {where} {name}{"   OVER" if length > args.max_function else ""}')
    return 1 if over_files or over_funcs else 0


if __name__ == '__main__':
    sys.exit(main())
