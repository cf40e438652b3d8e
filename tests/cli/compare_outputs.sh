#!/usr/bin/env bash
# compare --outputs: two output bundle directories compared case by case. Hand-made outputs:
# case c1 bit-equal; c2 with two of its 8 outputs moved 1 and 3 bf16 ULP -> "bit-equal 6 of 8,
# 2 differ, max 3 ULP" with the peers' criteria on the difference (benchdnn's exact rule
# fails it, a cosine passes it), exit 1; the same directory twice exits 0; a case in one directory only exits 5 (nothing
# differs, not everything compared); the same case of two shapes or of another matrix hash is
# refused (exit 2), as is a directory that is none.
# Needs Debian's python3 with numpy (ci/setup.sh installs it).
# Usage: compare_outputs.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "compare_outputs: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
"$PY" -c 'import numpy' 2>/dev/null || { echo "compare_outputs: no numpy for $PY: skipped"; exit 77; }
"$PY" - "$WORK" <<'PY' || fail "writing the outputs"
import sys
import numpy as np
from a4w4check.bundle import save_output
w = sys.argv[1]
def put(d, name, y, h="00000000000000aa"):
    M, N = y.shape
    src = {"M": str(M), "N": str(N), "K": "64", "seed": "1", "matrix_hash": h,
           "tool_version": "0.0.0"}
    save_output(f"{w}/{d}", name, y, source=src, kernel="k", contract="ordered(1)")
base = (np.arange(8, dtype=np.uint16) + 0x3F80).reshape(2, 4)   # 1.0, 1.0078125, ...
c2 = base.copy(); c2[0, 1] += 1; c2[1, 3] += 3
put("a", "c1", base); put("a", "c2", base)
put("b", "c1", base); put("b", "c2", c2)
put("one", "c1", base); put("one", "c2", base); put("one", "c3", base)
put("shape", "c1", base.reshape(4, 2)); put("shape", "c2", base)
put("hash", "c1", base, "00000000000000bb"); put("hash", "c2", base, "00000000000000bb")
PY
out=$("$CLI" compare --outputs "$WORK/a" "$WORK/b"); rc=$?
[ $rc = 1 ] || fail "a vs b exit $rc (1 expected): $out"
echo "$out" | grep -q "^| c1 | 2 | 4 | bit-equal 8 of 8, 0 differ" || fail "c1 line: $out"
echo "$out" | grep -q "^| c2 | 2 | 4 | bit-equal 6 of 8, 2 differ, max 3 ULP; peers on the difference: aiter [PASFIL]*, .*cos-dq PASS, .*benchdnn FAIL" ||
  fail "c2 line: $out"
echo "$out" | grep -q "^2 cases in both, 0 in one only" || fail "totals: $out"
"$CLI" compare --outputs "$WORK/a" "$WORK/a" --out "$WORK/same" --quiet || fail "a vs a exit $?"
"$PY" - "$WORK/same/compare.json" <<'PY' || fail "compare.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert [c["file"] for c in d["cases"]] == ["c1.safetensors", "c2.safetensors"], d
assert all(c["bit_equal"] == c["outputs"] == 8 for c in d["cases"]), d
assert d["only_in"] == [], d
PY
grep -q "^| c2 | 2 | 4 | bit-equal 8 of 8" "$WORK/same/compare.md" || fail "compare.md"
out=$("$CLI" compare --outputs "$WORK/a" "$WORK/one" 2>&1); rc=$?
[ $rc = 5 ] || fail "a vs one exit $rc (5 expected): $out"
echo "$out" | grep -q "c3.safetensors only in CAND" || fail "one-only line: $out"
for d in shape hash; do
  out=$("$CLI" compare --outputs "$WORK/a" "$WORK/$d" 2>&1); rc=$?
  [ $rc = 2 ] || fail "a vs $d exit $rc (2 expected): $out"
done
echo "$out" | grep -q "c1.safetensors: metadata matrix_hash '00000000000000aa' in BASE, '00000000000000bb' in CAND: outputs of other operands" ||
  fail "hash line: $out"
out=$("$CLI" compare --outputs "$WORK/a" "$WORK/none" 2>&1); rc=$?
[ $rc = 2 ] || fail "missing dir exit $rc: $out"
out=$("$CLI" compare --outputs "$WORK/a" "$WORK/b" --format html 2>&1); rc=$?
[ $rc = 2 ] || fail "--format with --outputs exit $rc: $out"
echo "compare_outputs: ok"
