#!/usr/bin/env bash
# compare on crafted pairs (tests/data/report_compare_{base,cand}.json: a new failure, a new
# failing case, a fixed case, a still-failing one, changed bits by y_hash and by mismatch
# records, proven-same and unknown bits, different inputs, a slower and a faster case, a case
# gone) against the pinned Markdown, plus a planted regression between two real runs: the
# reference plugin (base) and the bad plugin, one ULP off in row 0 (candidate).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3 TOOLS=$4
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
B=tests/data/report_compare_base.json C=tests/data/report_compare_cand.json
code() { set +e; "$@"; local rc=$?; set -e; echo "$rc"; }

# crafted pair: exit 1, every category found, Markdown as pinned
rc=$(code "$CLI" compare "$B" "$C" --out "$WORK/c" --quiet)
[ "$rc" -eq 1 ] || { echo "compare crafted: exit $rc, expected 1"; exit 1; }
for f in compare.md compare.html compare.json; do [ -s "$WORK/c/$f" ] || { echo "no $f"; exit 1; }; done
tot() { grep -oE "\"$1\":[[:space:]]*[0-9]+" "$WORK/c/compare.json" | head -n 1 | grep -oE '[0-9]+$'; }
for kv in matched=10 new_failures=2 fixed=1 still_failing=1 bits_changed=4 bits_same=4 \
          bits_unknown=1 inputs_differ=1 only_base=1 only_cand=0 slower=1 faster=1; do
  [ "$(tot "${kv%=*}")" = "${kv#*=}" ] || { echo "totals: ${kv%=*} is $(tot "${kv%=*}"), expected ${kv#*=}"; exit 1; }
done
grep -q '"geomean_ratio":[[:space:]]*1.080059' "$WORK/c/compare.json" ||   # 2^(1/9): ratios 4, 1/2, seven 1s
  { echo "geometric mean is not 2^(1/9)"; grep geomean "$WORK/c/compare.json"; exit 1; }
grep -q 'y_hash 00000000000000aa -> 00000000000000bb' "$WORK/c/compare.md"
grep -q '<title>a4w4check compare: crafted vs crafted - REGRESSION</title>' "$WORK/c/compare.html"
if [ "${A4W4_UPDATE_GOLDEN:-0}" = 1 ]; then
  rc=$(code "$CLI" compare "$B" "$C" --out "$WORK/golden" --format md --quiet)
  [ "$rc" -eq 1 ] || { echo "compare for the golden: exit $rc, expected 1"; exit 1; }
  cp "$WORK/golden/compare.md" tests/data/report_compare_golden.md
fi
set +e; "$CLI" compare "$B" "$C" > "$WORK/stdout.md" 2> /dev/null; rc=$?; set -e
[ "$rc" -eq 1 ] || { echo "compare to standard output: exit $rc, expected 1"; exit 1; }
diff -u tests/data/report_compare_golden.md "$WORK/stdout.md" ||
  { echo "compare Markdown changed: review, then A4W4_UPDATE_GOLDEN=1 ctest -R report_compare"; exit 1; }
cmp "$WORK/stdout.md" "$WORK/c/compare.md"
# a run against itself: no new failure, nothing changed
rc=$(code "$CLI" compare "$B" "$B" --format json --out "$WORK/same" --quiet)
[ "$rc" -eq 0 ] || { echo "compare with itself: exit $rc"; exit 1; }
grep -qE '"bits_changed":[[:space:]]*0' "$WORK/same/compare.json"
# options
rc=$(code "$CLI" compare "$B" "$C" --slower 5 --format json --out "$WORK/s5" --quiet)
grep -qE '"slower":[[:space:]]*0,' "$WORK/s5/compare.json"
set +e; "$CLI" compare "$B" 2> "$WORK/err"; rc=$?; set -e
[ "$rc" -eq 2 ] && grep -q 'need BASE.json and CAND.json' "$WORK/err"
set +e; "$CLI" compare "$B" "$C" --pair nonsense 2> "$WORK/err"; rc=$?; set -e
[ "$rc" -eq 2 ] && grep -q "must be BASE_BACKEND=CAND_BACKEND" "$WORK/err"
# a pair naming a backend with no entry compares nothing: exit 2, one line, nothing written
set +e; "$CLI" compare "$B" "$C" --pair no-such=cpu-asm --out "$WORK/np" 2> "$WORK/err"; rc=$?; set -e
[ "$rc" -eq 2 ] || { echo "compare --pair no-such=cpu-asm: exit $rc, expected 2"; exit 1; }
[ "$(wc -l < "$WORK/err")" -eq 1 ] && grep -q "backend 'no-such' has no entry in BASE" "$WORK/err" ||
  { echo "compare --pair no-such: $(cat "$WORK/err")"; exit 1; }
[ ! -e "$WORK/np" ] || { echo "compare --pair no-such wrote $WORK/np"; exit 1; }

# the planted regression: two real runs, two paths paired
REF="plugin:$TOOLS/../plugins/liba4w4_ref_plugin.so" BAD="plugin:$TOOLS/../plugins/liba4w4_bad_plugin.so"
"$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "$REF" --out "$WORK/ref" --quiet
rc=$(code "$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "$BAD" --out "$WORK/bad" --quiet)
[ "$rc" -eq 1 ] || { echo "bad plugin run: exit $rc"; exit 1; }
nbad=$(grep -cE '"verdict":[[:space:]]*"fail"' "$WORK/bad/results.json")
rc=$(code "$CLI" compare "$WORK/ref" "$WORK/bad" --pair "$REF=$BAD" --format json --out "$WORK/reg" --quiet)
[ "$rc" -eq 1 ] || { echo "planted regression: exit $rc, expected 1"; exit 1; }
grep -qE "\"new_failures\":[[:space:]]*$nbad," "$WORK/reg/compare.json" ||
  { echo "planted regression: expected $nbad new failures"; exit 1; }
# without the pair the plugins are different paths: nothing matches, yet the failures are new
rc=$(code "$CLI" compare "$WORK/ref" "$WORK/bad" --format json --out "$WORK/nopair" --quiet)
[ "$rc" -eq 1 ]
# the other way round it is a fix: exit 0
rc=$(code "$CLI" compare "$WORK/bad" "$WORK/ref" --pair "$BAD=$REF" --format json --out "$WORK/fix" --quiet)
[ "$rc" -eq 0 ] || { echo "fixed direction: exit $rc, expected 0"; exit 1; }
grep -qE "\"fixed\":[[:space:]]*$nbad," "$WORK/fix/compare.json"
# a candidate whose verdict is INCOMPLETE is no pass, even with no new failure: exit 5, one line
python3 - "$WORK/ref/results.json" "$WORK/inc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["verdict"] = "INCOMPLETE"
d["verdict_reason"] = "3 of 4 expected items recorded"
json.dump(d, open(sys.argv[2], "w"))
PY
set +e; "$CLI" compare "$WORK/ref" "$WORK/inc.json" --format json --out "$WORK/inc" --quiet 2> "$WORK/err"; rc=$?; set -e
[ "$rc" -eq 5 ] || { echo "compare against an INCOMPLETE candidate: exit $rc, expected 5"; exit 1; }
# --quiet keeps the totals line (the result), then the one line saying why the exit is 5
[ "$(wc -l < "$WORK/err")" -eq 2 ] && grep -q "^a4w4check compare: .* new failures" "$WORK/err" &&
  tail -n 1 "$WORK/err" | grep -q "verdict INCOMPLETE (3 of 4 expected items recorded)" ||
  { echo "compare INCOMPLETE: $(cat "$WORK/err")"; exit 1; }
# a candidate that says PASS over counts that contradict it (half its items) contradicts
# itself: refused where it is loaded, exit 2, one line
python3 - "$WORK/ref/results.json" "$WORK/half.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "PASS", d["verdict"]
d["counts"]["recorded_items"] = d["counts"]["expected_items"] // 2
json.dump(d, open(sys.argv[2], "w"))
PY
set +e; "$CLI" compare "$WORK/ref" "$WORK/half.json" --format json --out "$WORK/half" --quiet 2> "$WORK/err"; rc=$?; set -e
[ "$rc" -eq 2 ] && [ "$(wc -l < "$WORK/err")" -eq 1 ] &&
  grep -q "half.json: records verdict PASS with counts that deny it (.*15 of 30 items" "$WORK/err" ||
  { echo "compare against a contradicted PASS: exit $rc: $(cat "$WORK/err")"; exit 1; }
# new failures still come first: exit 1
rc=$(code "$CLI" compare "$WORK/ref" "$WORK/bad" --pair "$REF=$BAD" --format json --out "$WORK/reg2" --quiet)
[ "$rc" -eq 1 ]
echo "compare ok"
