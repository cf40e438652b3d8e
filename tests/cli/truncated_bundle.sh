#!/usr/bin/env bash
# A truncated bundle inside a run is bad input, said once (exit 2, the file and the rule), and
# no kernel mismatch: no "FAIL golden/... 0 of 0 checked differ" line (before: the oracle's
# entry was printed as a failure beside the bad-input line). The entry's note says "refused".
. "$(dirname "$0")/common.sh.inc"
g=$(ls "$SRC"/cases/golden/*.safetensors | head -1)
head -c 3000 "$g" > t.safetensors
code "$CLI" run --bundle t.safetensors --out o
[ "$rc" = 2 ] || { cat err.txt; fail "truncated bundle: exit $rc, want 2"; }
if grep -q 'FAIL golden/t' err.txt; then cat err.txt; fail "the truncated bundle is printed as a failure"; fi
[ "$(grep -c 't.safetensors: .*past the data section' err.txt)" = 1 ] ||
  { cat err.txt; fail "the bad-input line is not there once"; }
grep -q '"note":[[:space:]]*"refused: bad input: t.safetensors' o/results.json || fail "the entry's note"
echo "truncated bundle: bad input, once"

# An output file of a bundle:DIR that is empty or truncated mid-tensor holds no outputs to
# compare: bad input the user handed over (exit 2, one line naming the file and the rule), the
# other cases still judged, and no "0 of 0 checked" anywhere (before: "FAIL a on bundle:...: 0 of
# 0 checked differ: backend error: ... file is shorter than 8 bytes", exit 1, a kernel mismatch).
small_cases 3 > c.csv
"$CLI" run --cases c.csv --no-golden --backend cpu-fallback --keep-outputs kept --quiet --out k ||
  fail "--keep-outputs run: exit $?"
d=kept/cpu-fallback
: > "$d/a.safetensors"                                             # 0 bytes
head -c "$(($(stat -c %s "$d/b.safetensors") - 40))" "$d/b.safetensors" > t && mv t "$d/b.safetensors"
code "$CLI" run --cases c.csv --no-golden --backend "bundle:$d" --out bo
[ "$rc" = 2 ] || { cat err.txt; fail "bundle:DIR with an empty and a truncated file: exit $rc, want 2"; }
grep -q "^a4w4check: run: bundle:$d: refused: $d/a.safetensors: file is shorter than 8 bytes" err.txt ||
  { cat err.txt; fail "the bad-input line does not name the empty file and the rule"; }
grep -q "and 1 more items refused or bad input" err.txt || { cat err.txt; fail "the truncated file is not counted"; }
if grep -q "FAIL\|of 0 checked" err.txt; then cat err.txt; fail "an unreadable output printed as a failure"; fi
"$CLI" report bo --format all --out rep --quiet || fail "report of the run: exit $?"
ls rep/report.html rep/junit.xml > /dev/null || fail "report wrote no HTML or JUnit"
if grep -rq "0 of 0" bo/summary.md rep; then fail "a report says 0 of 0 checked"; fi
grep -q "no output compared (refused: bad input)" rep/report.html rep/junit.xml ||
  fail "the HTML or JUnit report does not say no output was compared"
grep -q "no output compared (refused: bad input)" bo/summary.md || fail "summary.md does not say no output was compared"
/usr/bin/python3 - bo/results.json "$d" <<'PY' || exit 1
import json, sys
doc, d = json.load(open(sys.argv[1])), sys.argv[2]
got = {e["name"]: (e["verdict"], e.get("note", "")[:9]) for e in doc["cases"]
       if e["backend"].startswith("bundle:")}
want = {"a": ("fail", "refused: "), "b": ("fail", "refused: "), "c": ("pass", "")}
if {k: (v[0], v[1] if v[0] == "fail" else "") for k, v in got.items()} != want:
    sys.exit("truncated_bundle: bundle entries %s, expected %s" % (got, want))
PY
echo "truncated output files of a bundle:DIR: bad input, once; the other cases judged"
