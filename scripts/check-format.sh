#!/usr/bin/env bash
# Checks that every C++ file the repository tracks is formatted as .clang-format says, with
# Debian 12's clang-format 14 (the style is the version's: another version formats some
# lines differently). Exit 1 and the files' names when one is not.
#
#   scripts/check-format.sh              check (ctest: tst_format)
#   scripts/check-format.sh --fix        format them in place
#   scripts/check-format.sh --self-test  show the check fails on a misformatted file and
#                                        passes once it is formatted (ctest: tst_format_self_test)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
clang_format="${CLANG_FORMAT:-clang-format-14}"
if ! command -v "$clang_format" >/dev/null; then
  echo "check-format: $clang_format is missing (scripts/setup.sh installs clang-format-14)" >&2
  exit 1
fi

# The C++ files of a tree: tracked, and new ones git does not ignore (a checkout without
# git: every .cpp and .h under it).
cpp_files() {
  local tree="$1"
  if git -C "$tree" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$tree" ls-files --cached --others --exclude-standard -- '*.cpp' '*.h'
  else
    (cd "$tree" && find . -path ./build -prune -o \( -name '*.cpp' -o -name '*.h' \) -print | sed 's|^\./||')
  fi
}

# Checks the files (relative to tree) against the tree's .clang-format; prints the
# misformatted ones with clang-format's first complaint, returns 1 if there are any.
check_tree() {
  local tree="$1"
  local -a files
  mapfile -t files < <(cpp_files "$tree")
  if ((${#files[@]} == 0)); then
    echo "check-format: no C++ files under $tree" >&2
    return 1
  fi
  # One name per misformatted file (whole short lines: the two workers' output cannot mix).
  local bad
  bad="$(cd "$tree" && printf '%s\0' "${files[@]}" \
    | xargs -0 -n 50 -P 2 sh -c 'for f; do "$0" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done' \
      "$clang_format" | sort)"
  if [[ -n "$bad" ]]; then
    echo "check-format: $(wc -l <<<"$bad") of ${#files[@]} files are not formatted as .clang-format says:" >&2
    sed 's/^/  /' <<<"$bad" >&2
    local first
    first="$(head -n 1 <<<"$bad")"
    echo "check-format: what clang-format says of $first (first lines):" >&2
    (cd "$tree" && "$clang_format" --style=file --dry-run --Werror "$first" 2>&1 | head -n 9) >&2
    echo "check-format: scripts/check-format.sh --fix formats them" >&2
    return 1
  fi
  echo "check-format: ${#files[@]} files formatted as .clang-format says"
}

case "${1:-}" in
  --fix)
    mapfile -t files < <(cpp_files "$root")
    (cd "$root" && printf '%s\0' "${files[@]}" | xargs -0 -n 50 -P 2 "$clang_format" --style=file -i)
    echo "check-format: formatted ${#files[@]} files"
    ;;
  --self-test)
    # A tree of its own with the project's style and one file: misformatted, the check must
    # fail and name it; formatted by clang-format, it must pass.
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    cp "$root/.clang-format" "$scratch/"
    printf 'namespace payonce {\nint  answer( int x ){ if(x>0) return x*2; else return 0; }\n}\n' >"$scratch/misformatted.cpp"
    if output="$(check_tree "$scratch" 2>&1)"; then
      echo "self-test FAILED: the check passed a misformatted file:" >&2
      echo "$output" >&2
      exit 1
    fi
    if ! grep -q 'misformatted.cpp' <<<"$output"; then
      echo "self-test FAILED: the check failed without naming the misformatted file:" >&2
      echo "$output" >&2
      exit 1
    fi
    echo "self-test: the misformatted file was refused:"
    sed 's/^/  /' <<<"$output"
    (cd "$scratch" && "$clang_format" --style=file -i misformatted.cpp)
    if ! output="$(check_tree "$scratch" 2>&1)"; then
      echo "self-test FAILED: the check refused the file clang-format formatted:" >&2
      echo "$output" >&2
      exit 1
    fi
    echo "self-test: once formatted it passed: $output"
    ;;
  "")
    check_tree "$root"
    ;;
  *)
    echo "usage: $0 [--fix | --self-test]" >&2
    exit 2
    ;;
esac
