#!/usr/bin/env bash
# Captures end to end: a tiny torch model whose linear layers call AITER's ops (the fake aiter of
# python/tests, torch code with AITER's signatures and the real layout maps) runs under
# a4w4check.capture; `a4w4check verify` and `run --captures` judge every captured call from its
# own operands. The fake with the planted wrong-rows bug (rows >= 16 copied from row 0 when
# N <= 128) must be caught at row 16, by both commands. Usage: capture_verify.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
fail() { echo "capture_verify: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
export PYTHONPATH="$SRC/python:$SRC/python/tests/fake_aiter:$SRC/python/tests" PYTHONDONTWRITEBYTECODE=1
cat > "$WORK/model.py" <<'PY'
import sys, torch
from a4w4check import capture
import tiny_model
torch.manual_seed(0)
m = tiny_model.TinyModel()
with capture.capture(sys.argv[1], budget_bytes=1 << 26, sample_every=1, seed=0):
    for M in (5, 33):
        m(torch.randn(M, 256, dtype=torch.bfloat16))
PY
/usr/bin/python3 "$WORK/model.py" "$WORK/good" || fail "capture run exit $?"
n=$(ls "$WORK/good"/*.safetensors | wc -l)
[ "$n" -eq 8 ] || fail "expected 8 capture bundles (2 GEMM ops, 1 quantizer x 2 layers x 2 M), got $n"
"$CLI" verify "$WORK/good"/*.safetensors > "$WORK/good.txt" || fail "verify on correct captures exit $?"
grep -q "verify: 12 passed, 0 failed, 0 n/a" "$WORK/good.txt" || fail "$(tail -1 "$WORK/good.txt")"

FAKE_AITER_BUG=wrong-rows /usr/bin/python3 "$WORK/model.py" "$WORK/bad" || fail "capture run (bug) exit $?"
"$CLI" verify "$WORK/bad"/*.safetensors > "$WORK/bad.txt"
rc=$?
[ $rc -eq 1 ] || fail "verify on the wrong-rows captures exit $rc, expected 1"
# the fake aiter declares no contract: judged against exact inside the exact regime (all of
# it); every verdict line names the layer (module path) and the line that called it, without
# name_layers (the capture's own module hooks)
up=$(grep -n '# UP LAYER$' "$SRC/python/tests/tiny_model.py" | cut -d: -f1)
where="layer up at $SRC/python/tests/tiny_model.py:$up"
grep -qF "FAIL aiter.gemm_a4w4_33x64x256_0.safetensors [$where]: undeclared, 2112 checked, first mismatch y (16, 0)" \
  "$WORK/bad.txt" || fail "no FAIL at (16, 0) naming $where: $(grep FAIL "$WORK/bad.txt")"
[ "$(grep -c "^PASS .*\[layer \(up\|down\) at " "$WORK/good.txt")" -eq 12 ] ||
  fail "not every verdict line names its layer: $(head -3 "$WORK/good.txt")"
"$CLI" run --cases "$SRC/cases/edge.csv" --no-golden --backend cpu-fallback --captures "$WORK/bad" \
  --out "$WORK/run" --quiet
rc=$?
[ $rc -eq 1 ] || fail "run --captures exit $rc, expected 1"
grep -qF "\`capture/aiter.gemm_a4w4_33x64x256_0\` ($where) on \`capture:aiter.gemm_a4w4\`" "$WORK/run/summary.md" ||
  fail "the run's summary does not name the failing capture and its layer"
grep -qF "| capture/aiter.gemm_a4w4_5x64x256_0 ($where) |" "$WORK/run/summary.md" ||
  fail "the summary's rows do not name the capture's layer"

# quant-parity on the captures: each captured quantizer call of a layer against the GEMM
# captured for that layer (the ASM layer's weights through the layout inverses)
"$CLI" quant-parity --captures "$WORK/good" > "$WORK/qp.txt" || fail "quant-parity exit $?"
[ "$(grep -c '^up M=\(5\|33\) N=64 K=256: scale code differs in [0-9]* of [0-9]* blocks' "$WORK/qp.txt")" -eq 2 ] &&
  [ "$(grep -c '^down M=\(5\|33\) N=32 K=64: scale code differs' "$WORK/qp.txt")" -eq 2 ] ||
  fail "quant-parity does not report each captured layer: $(cat "$WORK/qp.txt")"

# a truncated capture: bad input, one line naming the file, exit 2
head -c 100 "$WORK/good/aiter.gemm_a4w4_5x64x256_0.safetensors" > "$WORK/trunc.safetensors"
"$CLI" verify "$WORK/trunc.safetensors" 2> "$WORK/trunc.err"
rc=$?
[ $rc -eq 2 ] || fail "truncated capture: exit $rc, expected 2"
[ "$(wc -l < "$WORK/trunc.err")" -eq 1 ] && grep -q "trunc.safetensors" "$WORK/trunc.err" ||
  fail "not one line naming the file: $(cat "$WORK/trunc.err")"
echo "capture_verify: 8 captures verified; the wrong-rows fake caught at (16, 0) by verify and run --captures"
