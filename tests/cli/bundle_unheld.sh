#!/usr/bin/env bash
# A case a bundle:DIR backend has no output of (left out by `external --max-outputs`, or not
# listed) costs no operands and no oracle: `run` judges nothing of it, says so, and stays
# INCOMPLETE (exit 5). Counted through results.json's stages.oracle_outputs (the outputs the
# host oracles computed), never wall seconds:
#   1. bundle:DIR alone, its large case left out: the oracles compute the small case's 96
#      outputs only (before: also every one of the large case's 4,195,328); the large case's
#      oracle entry is n/a and its bundle entry skipped, each note saying why;
#   2. bundle:DIR beside cpu-fallback under --budget-seconds 0: the large case is sampled as
#      it is without the bundle (before: checked whole because a bundle was in the run).
# Usage: bundle_unheld.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "bundle_unheld: $*"; exit 1; }
"$PY" -c "import numpy" 2>/dev/null || { echo "bundle_unheld: no numpy: skipped"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK"
export PYTHONPATH="$SRC/python:$SRC/examples/python" PYTHONDONTWRITEBYTECODE=1
cat > "$WORK/cases.csv" <<'CSV'
name,M,N,K,regime,seed,tags
bu_small,3,32,64,exact,72001,bundle
bu_large,4097,1024,256,wide,72002,bundle
CSV
"$CLI" export --cases "$WORK/cases.csv" --no-golden --out "$WORK/ops" --quiet >/dev/null ||
  fail "export exit $?"
"$PY" -m a4w4check.external --ops "$WORK/ops" --out "$WORK/outs" --kernel my_kernel:gemm \
  --max-outputs 100000 --quiet >/dev/null 2>"$WORK/ext.err" || fail "external exit $?"
grep -q "bu_large left out (4195328 outputs)" "$WORK/ext.err" || fail "external: $(cat "$WORK/ext.err")"
# stage R KEY: results.json's stages.KEY of run R
stage() {
  "$PY" -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["stages"][sys.argv[2]]))' \
    "$WORK/$1/results.json" "$2"
}
# entry R BACKEND FIELD: the bu_large entry's FIELD for BACKEND in run R
entry() {
  "$PY" - "$WORK/$1/results.json" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = [e for c in d["cases"] for e in c.get("entries", [c]) if e.get("name") == "bu_large"
     and e.get("backend") == sys.argv[2]]
print(e[0].get(sys.argv[3]) if e else "none")
PY
}

# 1. the bundle alone
"$CLI" run --cases "$WORK/cases.csv" --no-golden --backend "bundle:$WORK/outs" \
  --out "$WORK/alone" --quiet 2>"$WORK/alone.err"
rc=$?
[ "$rc" -eq 5 ] || fail "bundle alone: exit $rc, expected 5 ($(cat "$WORK/alone.err"))"
n=$(stage alone oracle_outputs)
[ "$n" -eq 96 ] || fail "bundle alone: the oracles computed $n outputs, expected 96 (bu_small's)"
grep -q '"verdict_reason":.*1 entry skipped (first: bu_large on bundle:' \
  "$WORK/alone/results.json" || fail "bundle alone: $(grep verdict_reason "$WORK/alone/results.json")"
[ "$(entry alone oracle verdict)" = "n/a" ] || fail "bundle alone: oracle entry $(entry alone oracle verdict)"
entry alone oracle note | grep -q "no backend of this run holds an output of this case" ||
  fail "bundle alone: oracle note: $(entry alone oracle note)"
entry alone "bundle:$WORK/outs" note | grep -q "manifest.json does not list this case" ||
  fail "bundle alone: bundle note: $(entry alone "bundle:$WORK/outs" note)"

# 2. beside a backend that computes: sampled as without the bundle
"$CLI" run --cases "$WORK/cases.csv" --no-golden --backend "bundle:$WORK/outs,cpu-fallback" \
  --budget-seconds 0 --out "$WORK/mixed" --quiet 2>"$WORK/mixed.err"
rc=$?
[ "$rc" -eq 5 ] || fail "mixed: exit $rc, expected 5 ($(cat "$WORK/mixed.err"))"
n=$(stage mixed oracle_outputs)
[ "$n" -gt 96 ] && [ "$n" -lt 1000000 ] ||
  fail "mixed: the oracles computed $n outputs (bu_large should be sampled, not whole)"
[ "$(entry mixed cpu-fallback verdict)" = "pass" ] || fail "mixed: cpu-fallback $(entry mixed cpu-fallback verdict)"
[ "$(entry mixed cpu-fallback sampled)" = "True" ] || fail "mixed: bu_large not sampled"
echo "bundle_unheld: ok"
