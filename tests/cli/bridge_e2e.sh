#!/usr/bin/env bash
# The bridge end to end: export -> python -m a4w4check.external -> run --backend bundle:OUT.
# A correct kernel passes on every output of every case and golden bundle; a kernel with one
# planted wrong output fails at that case; a missing output is a skip; outputs of other operands
# (another seed, another matrix) are refused with exit 2 and one line. Needs Debian's python3
# with numpy and torch (ci/setup.sh installs them).
# Usage: bridge_e2e.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "bridge_e2e: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
ext() { "$PY" -m a4w4check.external --ops "$WORK/ops" "$@"; }
run() { "$CLI" run --e8m0-code0 2^-127 --set edge --quiet "$@"; }

"$CLI" export --set edge --out "$WORK/ops" --quiet >/dev/null || fail "export exit $?"
ext --out "$WORK/good" --kernel torch-dequant >/dev/null || fail "external torch-dequant exit $?"
run --backend "bundle:$WORK/good" --out "$WORK/r-good" || fail "run on correct outputs exit $?"
"$PY" - "$WORK/r-good/results.json" <<'PY' || fail "full outputs not checked"
import json, sys
doc = json.load(open(sys.argv[1]))
es = [e for e in doc["cases"] if e["backend"].startswith("bundle:")]
assert len(es) == 35, len(es)                       # 30 cases + 5 golden case bundles
for e in es:
    assert e["verdict"] == "pass", e
    assert e["contract"] == "bounded(1)", e
    assert e["checked_outputs"] == e["M"] * e["N"] and not e["sampled"], e
PY
# every output judged, whatever the budget: summary.md cites no budget (before: "outputs
# sampled above 2^26 MACs unless the run's budget of 60 s ... covers the case")
grep -q "every output checked (a bundle backend holds every output: no budget" "$WORK/r-good/summary.md" ||
  fail "summary.md does not say every output was checked"
if grep -q "budget of" "$WORK/r-good/summary.md"; then fail "summary.md cites a budget that did not apply"; fi

# a kernel with one output two binades off in one case: the run fails there, exit 1
cat > "$WORK/planted.py" <<'PY'
import torch
from a4w4check import kernels
def gemm(a_fp4, a_scale, w_fp4, w_scale, **_):
    t = lambda x: x if isinstance(x, torch.Tensor) else torch.from_numpy(x)
    A = kernels.dequant_torch(torch, t(a_fp4), t(a_scale))
    W = kernels.dequant_torch(torch, t(w_fp4), t(w_scale))
    y = (A @ W.T).to(torch.bfloat16)
    if y.shape == (5, 256):          # e_k96 only: one output off by two binades
        b = y.view(torch.int16)
        b[4, 255] ^= 0x0100
    return y
gemm.a4w4_contract = "bounded(1)"
PY
PYTHONPATH="$SRC/python:$WORK" ext --out "$WORK/bad" --kernel planted:gemm >/dev/null ||
  fail "external planted exit $?"
run --backend "bundle:$WORK/bad" --out "$WORK/r-bad"
rc=$?
[ $rc -eq 1 ] || fail "planted wrong output: run exit $rc, expected 1"
grep -q '`e_k96` on `bundle:' "$WORK/r-bad/summary.md" || fail "summary does not name e_k96"

# parity of the two outside paths on the same operands: compare --pair finds the one case
"$CLI" compare "$WORK/r-good/results.json" "$WORK/r-bad/results.json" \
  --pair "bundle:$WORK/good=bundle:$WORK/bad" > "$WORK/parity.md"
rc=$?
[ $rc -eq 1 ] || fail "compare --pair exit $rc, expected 1 (a new failure)"
grep -q 'e_k96' "$WORK/parity.md" || fail "the parity report does not name e_k96"

# a missing output file: that entry is a skip naming the file
# and the verdict is INCOMPLETE (exit 5), never PASS over the comparison not made
rm "$WORK/good/e_m1.safetensors"
run --backend "bundle:$WORK/good" --out "$WORK/r-miss" 2> "$WORK/miss.err"
rc=$?
[ $rc -eq 5 ] || fail "a bundle missing one output: exit $rc, expected 5 (INCOMPLETE)"
"$PY" - "$WORK/r-miss/results.json" <<'PY' || fail "missing output not a skip"
import json, sys
doc = json.load(open(sys.argv[1]))
e = [e for e in doc["cases"] if e["name"] == "e_m1" and e["backend"].startswith("bundle:")][0]
assert e["verdict"] == "skip" and "no output file" in e["note"], e
assert doc["verdict"] == "INCOMPLETE", doc["verdict"]
assert "1 entry skipped (first: e_m1 on bundle:" in doc["verdict_reason"], doc["verdict_reason"]
PY

# outputs of other operands: refused, exit 2, one line naming the file and the rule
"$PY" - "$WORK/good/e_n8.safetensors" <<'PY'
import sys
from a4w4check import safetensors_codec as codec
f = sys.argv[1]
got = codec.load(f)
meta = dict(got.metadata)
meta["seed"] = "12345"
codec.save(f, got.tensors, meta)
PY
run --backend "bundle:$WORK/good" --out "$WORK/r-seed" 2>"$WORK/seed.err"
rc=$?
[ $rc -eq 2 ] || fail "another seed: run exit $rc, expected 2"
grep -q "e_n8.safetensors: metadata seed '12345'" "$WORK/seed.err" || fail "no refusal line: $(cat "$WORK/seed.err")"
[ -s "$WORK/r-seed/results.json" ] || fail "the results already computed were not written"
sed -i 's/"matrix_hash": *"[0-9a-f]*"/"matrix_hash": "0000000000000000"/' "$WORK/good/manifest.json"
run --backend "bundle:$WORK/good" --out "$WORK/r-hash" 2>"$WORK/hash.err"
rc=$?
[ $rc -eq 2 ] || fail "another matrix: run exit $rc, expected 2"
grep -q "manifest.json: matrix_hash 0000000000000000" "$WORK/hash.err" || fail "no refusal line: $(cat "$WORK/hash.err")"
echo "bridge_e2e: export -> external -> bundle: correct passes, planted wrong output fails, missing is skip, other operands refused"
