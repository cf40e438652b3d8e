#!/usr/bin/env bash
# The quick pre-merge path (docs/bridge.md "The quick pre-merge path") on a few of its cases,
# so that it cannot rot: the set premerge-quick is one set for `run --set`, `export --set` and
# a4w4check.cases("premerge-quick"); `coverage` reaches every item with it; and the README's
# Python route (export -> external -> run --backend bundle:) on three of its cases (a small
# one verbatim from premerge, two bucket stand-ins) passes with every output checked and a
# progress line per case.
# Usage: quick_route.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "quick_route: $*"; exit 1; }
"$PY" -c "import numpy" 2>/dev/null || { echo "quick_route: no numpy: skipped"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK"
export PYTHONPATH="$SRC/python:$SRC/examples/python" PYTHONDONTWRITEBYTECODE=1
QUICK="$SRC/cases/premerge-quick.csv"

# 1. coverage: the quick set reaches every item the pre-merge set reaches
"$CLI" coverage --cases "$QUICK" > "$WORK/coverage.txt" || fail "coverage exit $?"
grep -q "^uncovered: 0 of" "$WORK/coverage.txt" || fail "coverage: $(tail -1 "$WORK/coverage.txt")"

# 2. one set: the CLI's --set premerge-quick (one shard of it) is cases the package lists
"$CLI" export --set premerge-quick --shard 1/100 --no-golden --out "$WORK/shard" --quiet \
  >/dev/null || fail "export --set premerge-quick exit $?"
"$PY" - "$WORK/shard/manifest.json" <<'PY' || fail "the CLI's and the package's premerge-quick differ"
import json, sys
from a4w4check import casesets
m = json.load(open(sys.argv[1]))
names = [c.name for c in casesets.load("premerge-quick")]
assert m["set"] == "premerge-quick", m["set"]
assert m["cases"] and set(m["cases"]) <= set(names), m["cases"]
PY

# 3. the Python route on three of its cases
{ head -n "$(grep -n '^name,' "$QUICK" | cut -d: -f1)" "$QUICK" | grep -v '^#'
  grep -E '^(m1_n192_k1024|qb_m1025_n32_k256|qb_m8193_n32_k768),' "$QUICK"; } > "$WORK/few.csv"
[ "$(wc -l < "$WORK/few.csv")" -eq 4 ] || fail "few.csv: $(cat "$WORK/few.csv")"
"$CLI" export --cases "$WORK/few.csv" --no-golden --out "$WORK/ops" --quiet >/dev/null ||
  fail "export exit $?"
"$PY" -m a4w4check.external --ops "$WORK/ops" --out "$WORK/outs" --kernel my_kernel:gemm \
  >/dev/null 2>"$WORK/ext.err" || fail "external exit $?: $(cat "$WORK/ext.err")"
[ "$(grep -c '^a4w4check.external: \[[1-3]/3\] ' "$WORK/ext.err")" -eq 3 ] ||
  fail "external: not one progress line per case: $(cat "$WORK/ext.err")"
"$CLI" run --cases "$WORK/few.csv" --no-golden --backend "bundle:$WORK/outs" --out "$WORK/run" \
  --quiet 2>"$WORK/run.err" || fail "run exit $?: $(cat "$WORK/run.err")"
"$PY" - "$WORK/run/results.json" <<'PY' || fail "run: not every output of the three cases checked"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "PASS", d["verdict"]
want = {"m1_n192_k1024": 192, "qb_m1025_n32_k256": 1025 * 32, "qb_m8193_n32_k768": 8193 * 32}
got = {e["name"]: e["checked_outputs"] for e in d["cases"] if e["backend"].startswith("bundle:")}
assert got == want, got
PY
echo "quick_route: ok"
