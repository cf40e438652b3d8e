#!/usr/bin/env bash
# One judgement of captures: `a4w4check verify` and `run --captures` read each capture bundle
# through a4w4_run_capture (commands/verify_capture.h) and must report the same verdict, checked
# count, judged counts (bit-exact / within bound / not judged) and note for it. Captures
# (tests/cli/capture/make_captures.py, numpy GEMMs recorded by a4w4check.capture):
#   declared  an ordered(1) kernel declaring ordered(1), wide operands: PASS, every output
#             judged bit for bit;
#   user      the same kernel declaring nothing, the user giving a discovered contract file
#             (ordered(1)): PASS, every output judged;
#   outside   the same kernel declaring nothing, wide operands where its y differs from the
#             exact sum: no contract declared, never judged against one, so no false alarm
#             (the capture once recorded "exact" for every GEMM and verify failed it): not a
#             FAIL, the outputs outside the exact regime counted not judged;
#   wrong     declaring nothing, exact-regime operands, one output one ULP off: FAIL in both.
# Usage: capture_judge_same.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
fail() { echo "capture_judge_same: $*"; exit 1; }
export PYTHONPATH="$SRC/python:$SRC/python/tests/fake_aiter:$SRC/python/tests" PYTHONDONTWRITEBYTECODE=1
{ echo "name,M,N,K,regime,seed,tags"
  grep '^m16_n192_k1024,' "$SRC/cases/premerge.csv" | sed 's/^m16_n192_k1024,/wide,/'
  grep '^m33_n192_k1024,' "$SRC/cases/premerge.csv" | sed 's/^m33_n192_k1024,/exact,/'; } > "$WORK/c.csv"
"$CLI" export --cases "$WORK/c.csv" --no-golden --with-expected --out "$WORK/ops" --quiet
/usr/bin/python3 "$SRC/tests/cli/capture/make_captures.py" "$WORK/ops" "$WORK/caps" \
  declared user outside wrong || fail "make_captures exit $?"

set +e
"$CLI" verify "$WORK"/caps/*.safetensors > "$WORK/verify.txt" 2> "$WORK/verify.err"
vrc=$?
# the captures alone: no case file, no backend (before, a hand-made one-case CSV was needed)
"$CLI" run --captures "$WORK/caps" --out "$WORK/run" --quiet > "$WORK/run.log" 2>&1
rrc=$?
set -e
[ $vrc -eq 1 ] || fail "verify exit $vrc, expected 1 (the wrong capture): $(cat "$WORK/verify.txt" "$WORK/verify.err")"
[ $rrc -eq 1 ] || fail "run --captures exit $rrc, expected 1: $(cat "$WORK/run.log")"
"$CLI" report "$WORK/run" --format md --out - > /dev/null || fail "report refuses the run's results.json"
/usr/bin/python3 - "$WORK/run/results.json" <<'PY' || fail "run --captures alone ran more than the captures"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["set"] == "captures" and doc["backends"] == ["oracle"], (doc["set"], doc["backends"])
assert doc["cases"] and all(e["name"].startswith("capture/") for e in doc["cases"]), doc["cases"]
PY

/usr/bin/python3 "$SRC/tests/cli/capture/same_judgement.py" "$WORK/verify.txt" "$WORK/run/results.json" \
  declared=PASS user=PASS outside=SKIP wrong=FAIL || fail "verify and run --captures disagree (above)"
grep -q "^verify: 2 passed, 1 failed, 0 n/a, 1 skipped$" "$WORK/verify.txt" || fail "$(tail -1 "$WORK/verify.txt")"
# what each must say beyond agreeing
grep -q "^PASS declared.safetensors \[called at [^]]*make_captures.py:[0-9]*\]: ordered(1), 3072 checked (3072 judged bit for bit, 0 within bound, 0 not judged; 3072 of the judged match)$" \
  "$WORK/verify.txt" || fail "declared: $(grep declared "$WORK/verify.txt")"
grep -q "^PASS user.safetensors \[called at [^]]*make_captures.py:[0-9]*\]: ordered(1), 3072 checked (3072 judged bit for bit, 0 within bound, 0 not judged; 3072 of the judged match)$" \
  "$WORK/verify.txt" || fail "user: $(grep user "$WORK/verify.txt")"
grep -qE "^SKIP outside.safetensors \[called at [^]]*make_captures.py:[0-9]*\]: undeclared, 0 checked \(0 judged bit for bit, 0 within bound, 3072 not judged; 0 of the judged match\); no contract declared" \
  "$WORK/verify.txt" || fail "outside: $(grep outside "$WORK/verify.txt")"
grep -qE "^FAIL wrong.safetensors \[called at [^]]*make_captures.py:[0-9]*\]: undeclared, [0-9]+ checked, first mismatch .* \(1, 2\)" \
  "$WORK/verify.txt" || fail "wrong: $(grep wrong "$WORK/verify.txt")"
echo "capture_judge_same: 4 captures, the same verdicts and counts from verify and run --captures"
