#!/usr/bin/env bash
# The judged counts say what they count: "bit_exact" (summary.md "judged bit for bit") counts
# outputs judged bit for bit, matching or not, and "matching" those of them that matched
# (before: the column read "outputs bit-exact" and showed 100 % on a failing backend). The bad
# plugin (row 0 one ULP off) on two small cases: its judged outputs less its mismatches match,
# and fewer than it judged; cpu-asm matches every output it judged.
. "$(dirname "$0")/common.sh.inc"
small_cases 2 > c.csv
code "$CLI" run --cases c.csv --no-golden --backend "cpu-asm,plugin:$P/liba4w4_bad_plugin.so" --out r
[ "$rc" = 1 ] || { cat err.txt; fail "run: exit $rc, want 1"; }
/usr/bin/python3 - r/results.json "plugin:$P/liba4w4_bad_plugin.so" <<'PY' || fail "judged.matching"
import json, sys
doc, bad = json.load(open(sys.argv[1])), sys.argv[2]
for be in ("cpu-asm", bad):
    es = [e for e in doc["cases"] if e["backend"] == be]
    judged = sum(e["judged_bit_exact"] + e["judged_in_bound"] for e in es)
    differ = sum(e["mismatches"] for e in es)
    row = doc["judged"][be]["all"]
    assert row["matching"] == judged - differ, (be, row, judged, differ)
    assert (differ > 0) == (be == bad), (be, differ)
    # row 0 of each case (the call sequence's entry: row 0 of each of its calls)
    plain = [e for e in es if not e["name"].endswith("/call-sequence")]
    assert sum(e["mismatches"] for e in plain) == sum(e["N"] for e in plain) if be == bad \
        else differ == 0
PY
grep -q '| judged bit for bit | in bound | not judged | matching |' r/summary.md || fail "summary.md's columns"
echo "judged counts: bit for bit, and matching"
