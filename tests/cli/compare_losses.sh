#!/usr/bin/env bash
# compare never passes over what the candidate no longer checks, and --pair keeps to its two
# paths (reports/compare.c, harness/cli/cmd_compare.c). Reproducers (before the fix):
#   a candidate that lost a backend, lost every entry, or is of another matrix -> exit 0
#   (the losses only listed under "only in base"); now 5 with one line;
#   --pair with base and candidate swapped -> the unpaired entries counted as new failures
#   and as fixed at once (28 and 28); now left out, counted as unpaired.
. "$(dirname "$0")/common.sh.inc"
small_cases 3 > c.csv
cat > other.csv <<'CSV'
name,M,N,K,regime,seed,tags
x,4,32,256,normal,11,
y,8,64,256,normal,12,
CSV
run() { "$CLI" run --no-golden --quiet "$@"; }
run --cases c.csv --backend cpu-fallback,cpu-asm --out base || fail "base: exit $?"
run --cases c.csv --backend cpu-fallback --out lost-backend || fail "lost backend: exit $?"
run --cases other.csv --backend cpu-fallback,cpu-asm --out other-matrix || fail "other: exit $?"

code "$CLI" compare base base
[ "$rc" = 0 ] || { cat err.txt; fail "base against itself: exit $rc"; }

for cand in lost-backend other-matrix; do
  code "$CLI" compare base "$cand"
  [ "$rc" = 5 ] || { cat err.txt; fail "a candidate of $cand: exit $rc, expected 5"; }
  grep -q "^a4w4check: compare: $cand lacks [0-9]* entr[a-z]* of base (first: " err.txt ||
    { cat err.txt; fail "$cand: no line naming the loss"; }
  echo "$cand: exit 5: $(grep lacks err.txt)"
done

# every entry lost: the candidate's document holds none
python3 - base/results.json empty.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["cases"] = []
for k in ("verdict", "verdict_reason", "counts"):
    doc.pop(k, None)
json.dump(doc, open(sys.argv[2], "w"))
PY
code "$CLI" compare base/results.json empty.json
[ "$rc" = 5 ] || { cat err.txt; fail "a candidate without entries: exit $rc, expected 5"; }
echo "every entry lost: exit 5"

# --pair both ways on one run that holds a failing path (the bad plugin, row 0 off by one)
run --cases c.csv --backend "cpu-fallback,plugin:$P/liba4w4_bad_plugin.so" --out two ||
  [ $? = 1 ] || fail "the run with the bad plugin"
bad="plugin:$P/liba4w4_bad_plugin.so"
code "$CLI" compare two two --format json --pair "$bad=cpu-fallback"
[ "$rc" = 0 ] || { cat err.txt; fail "--pair bad=good: exit $rc, expected 0 (fixes only)"; }
python3 - out.txt <<'PY' || fail "--pair bad=good: wrong totals"
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
# unpaired: the oracle entries on each side and the plugin's call sequence on each side
assert t["new_failures"] == 0 and t["fixed"] == 3 and t["unpaired"] == 8, t
PY
code "$CLI" compare two two --format json --pair "cpu-fallback=$bad"
[ "$rc" = 1 ] || { cat err.txt; fail "--pair good=bad: exit $rc, expected 1 (new failures)"; }
python3 - out.txt <<'PY' || fail "--pair good=bad: wrong totals"
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
assert t["new_failures"] == 3 and t["fixed"] == 0 and t["unpaired"] == 8, t
PY
echo "compare_losses: losses exit 5; --pair either way counts only its two paths"
