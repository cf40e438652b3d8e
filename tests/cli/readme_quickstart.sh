#!/usr/bin/env bash
# README.md's "Judge your kernel" works as written: its three command blocks (marked
# `<!-- readme-quickstart: plugin -->`, `<!-- readme-quickstart: python -->` and
# `<!-- readme-quickstart: pytest -->`, the in-process pytest file) run line by
# line, verbatim, from a directory laid out as the repository root after a build (harness/,
# examples/, python/, cases/ and build/a4w4check), and each run passes (exit 0, verdict PASS,
# the example kernel's entries judged). The example plugin also compiles without a warning
# under -Wall -Wextra -Werror. Debian's python3 (numpy) comes first on PATH. The pytest file
# README shows "whole" is examples/python/test_my_gemm.py, byte for byte. What the commands
# leave in the root (the plugin, the runs, ops/, outs/) is ignored by git (in a git checkout).
. "$(dirname "$0")/common.sh.inc"
for d in harness examples python cases; do ln -s "$SRC/$d" "$d"; done
mkdir build && ln -s "$CLI" build/a4w4check
export PATH=/usr/bin:$PATH PYTHONDONTWRITEBYTECODE=1

# block NAME: the lines of README's fenced block after the marker for NAME
block() {
  awk -v m="<!-- readme-quickstart: $1 -->" '$0 == m {on = 1; next}
    on && /^```sh$/ {inb = 1; next} inb && /^```$/ {exit} inb {print}' "$SRC/README.md"
}
# the pytest block loads build/liba4w4check.so into python: in a sanitizer build only with the
# sanitizer runtime loaded first (A4W4_PY_SANITIZER_ENV, set by tests/CMakeLists.txt)
ln -s "$(dirname "$CLI")/liba4w4check.so" build/liba4w4check.so
shown=$(awk '/examples\/python\/test_my_gemm.py\), whole:$/ {on = 1; next}
  on && /^```python$/ {inb = 1; next} inb && /^```$/ {exit} inb {print}' "$SRC/README.md")
[ -n "$shown" ] && [ "$shown" = "$(cat "$SRC/examples/python/test_my_gemm.py")" ] ||
  fail "README's pytest file is not examples/python/test_my_gemm.py as it stands"
names="plugin python pytest"
py_env=()
# ldd's output is read whole: under pipefail `ldd | grep -q` fails when grep exits at the first
# match and ldd, still writing, gets SIGPIPE
libs=$(ldd build/liba4w4check.so) || fail "ldd build/liba4w4check.so: exit $?"
if grep -q 'libasan\|libubsan' <<< "$libs"; then
  read -r -a py_env <<< "${A4W4_PY_SANITIZER_ENV:-}"
  ((${#py_env[@]})) || fail "liba4w4check is built with sanitizers and A4W4_PY_SANITIZER_ENV" \
    "(the runtime python must preload) is not set"
fi
for name in $names; do
  lines=$(block "$name")
  least=2; [ "$name" = pytest ] && least=1
  [ "$(printf '%s\n' "$lines" | grep -c .)" -ge $least ] || fail "README has no '$name' quick-start block"
  pre=(); [ "$name" = pytest ] && pre=(env ${py_env[@]+"${py_env[@]}"})
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    set +e; ${pre[@]+"${pre[@]}"} bash -c "$line" > "out-$name.txt" 2> "err-$name.txt"; rc=$?; set -e
    [ "$rc" = 0 ] || { tail -5 "err-$name.txt"; fail "$name: exit $rc from: $line"; }
  done <<< "$lines"
done
for r in my-run:plugin: my-run-py:bundle:; do
  dir=${r%%:*} be=${r#*:}
  grep -q '^\*\*Verdict: PASS\*\*' "$dir/summary.md" || fail "$dir: not a PASS"
  /usr/bin/python3 - "$dir/results.json" "$be" <<'PY' || fail "$dir: the example kernel was not judged"
import json, sys
doc = json.load(open(sys.argv[1]))
es = [e for e in doc["cases"] if e["backend"].startswith(sys.argv[2])]
assert len(es) >= 30 and all(e["verdict"] == "pass" for e in es), len(es)
assert sum(e["checked_outputs"] for e in es) > 0
PY
done
# what the commands left here (the repository root in README) is ignored by git, so a user's
# `git status` stays clean: every new top-level entry but this script's own files
if git -C "$SRC" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  for f in *; do
    case $f in harness|examples|python|cases|build|out-*.txt|err-*.txt) continue ;; esac
    p=$f; [ -d "$f" ] && p=$f/
    git -C "$SRC" check-ignore -q --no-index "$p" ||
      fail "README's commands leave '$f' in the repository root and .gitignore does not ignore it"
  done
fi
cc -shared -fPIC -O2 -std=c11 -Wall -Wextra -Werror -Iharness/backends examples/plugin/my_gemm.c \
  -o libstrict.so -lm || fail "examples/plugin/my_gemm.c does not compile warning-free"
echo "README quick start: plugin and Python kernel judged, PASS"
