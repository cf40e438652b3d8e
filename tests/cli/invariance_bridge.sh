#!/usr/bin/env bash
# Batch invariance measured through the Python bridge: invariance --export-ops writes each
# call's operands (the batch, its repeat, rows alone, the reversed batch), python -m
# a4w4check.external runs a kernel on them, invariance --measure bundle:OUT judges in C.
# A batch-invariant numpy kernel (ordered(1)) measures invariant and agrees with its declared
# contract; one that splits K in two past M = 32 while declaring ordered(1) measures variant
# from M 33 and DISAGREES (exit 1); a missing call's output makes that measurement n/a (exit
# 5), never invariant; outputs of another --m are refused (exit 2); with torch importable,
# torch.matmul on the dequantized operands is measured too, in one command (python -m
# a4w4check.invariance), and skipped with a reason otherwise.
# Needs Debian's python3 with numpy (ci/setup.sh installs it).
# Usage: invariance_bridge.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "invariance_bridge: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK/kern"
export PYTHONPATH="$SRC/python:$WORK/kern" PYTHONDONTWRITEBYTECODE=1
"$PY" -c 'import numpy' 2>/dev/null || { echo "invariance_bridge: no numpy for $PY: skipped"; exit 77; }
cat > "$WORK/kern/inv_kernels.py" <<'PY'
"""Test kernels: ordered(1) in numpy, the same with K split in two past M = 32 (declaring
ordered(1): batch-variant), torch.matmul on the dequantized operands."""
import numpy as np
from a4w4check.numerics import dequant, f64_to_bf16


def _ops(a_fp4, a_scale, w_fp4, w_scale):
    host = lambda t: np.asarray(t.cpu() if hasattr(t, "cpu") else t, dtype=np.uint8)
    return dequant(host(a_fp4), host(a_scale)), dequant(host(w_fp4), host(w_scale))


def _blocks(A, W, lo, hi):
    total = np.zeros((A.shape[0], W.shape[0]), dtype=np.float32)
    for k in range(lo, hi, 32):
        total += (A[:, k:k + 32] @ W[:, k:k + 32].T).astype(np.float32)
    return total


def ordered1(a_fp4, a_scale, w_fp4, w_scale, **rest):
    A, W = _ops(a_fp4, a_scale, w_fp4, w_scale)
    return f64_to_bf16(_blocks(A, W, 0, A.shape[1]).astype(np.float64))


def split_past_32(a_fp4, a_scale, w_fp4, w_scale, **rest):
    A, W = _ops(a_fp4, a_scale, w_fp4, w_scale)
    K = A.shape[1]
    if A.shape[0] <= 32:
        return f64_to_bf16(_blocks(A, W, 0, K).astype(np.float64))
    h = K // 64 * 32
    return f64_to_bf16((_blocks(A, W, 0, h) + _blocks(A, W, h, K)).astype(np.float64))


def torch_matmul(a_fp4, a_scale, w_fp4, w_scale, **rest):
    import torch
    A, W = _ops(a_fp4, a_scale, w_fp4, w_scale)
    y = torch.from_numpy(A.astype(np.float32)) @ torch.from_numpy(W.astype(np.float32)).T
    return y.to(torch.bfloat16)


ordered1.a4w4_contract = split_past_32.a4w4_contract = "ordered(1)"
PY
printf 'M,N,K\n1,64,512\n' > "$WORK/pairs.csv"
M=1,2,32,33,40
inv() { "$CLI" invariance --shapes "$WORK/pairs.csv" --m $M "$@"; }
ext() { "$PY" -m a4w4check.external --ops "$WORK/ops" --quiet "$@"; }

out=$(inv --export-ops "$WORK/ops") || fail "export exit $?: $out"
echo "$out" | grep -q "^invariance: 26 calls of 5 measurements (1 pairs x 5 M) written to " ||
  fail "export line: $out"
ext --out "$WORK/ord" --kernel inv_kernels:ordered1 >/dev/null || fail "external ordered1 exit $?"
out=$(inv --measure "bundle:$WORK/ord"); rc=$?
[ $rc = 0 ] || fail "ordered1 measured exit $rc (0 expected): $out"
for m in 1 2 32 33 40; do
  echo "$out" | grep -q "N 64 K 512 M $m: invariant at M $m ([0-9]* outputs compared); declared contract predicts invariant$" ||
    fail "ordered1 at M $m: $out"
done
echo "$out" | grep -q ": 5 measurements, 0 disagree with their prediction or failed, 0 n/a" ||
  fail "ordered1 summary: $out"

ext --out "$WORK/split" --kernel inv_kernels:split_past_32 >/dev/null || fail "external split exit $?"
out=$(inv --measure "bundle:$WORK/split"); rc=$?
[ $rc = 1 ] || fail "split measured exit $rc (1 expected): $out"
echo "$out" | grep -q "M 32: invariant at M 32 .*predicts invariant$" || fail "split at M 32: $out"
echo "$out" | grep -q "M 33: variant at M 33 (3 rows, [0-9]* of [0-9]* outputs, max [0-9]* ULP); declared contract predicts invariant: DISAGREES" ||
  fail "split at M 33: $out"
echo "$out" | grep -q ": 5 measurements, 2 disagree" || fail "split summary: $out"

# a call without its output: that measurement is n/a (exit 5), never invariant
rm "$WORK/ord/invariance_m33_n64_k512_row16.safetensors"
out=$(inv --measure "bundle:$WORK/ord"); rc=$?
[ $rc = 5 ] || fail "missing output exit $rc (5 expected): $out"
echo "$out" | grep -q "M 33: n/a at M 33: no output file .*invariance_m33_n64_k512_row16.safetensors" ||
  fail "missing output line: $out"
echo "$out" | grep -q ": 5 measurements, 0 disagree with their prediction or failed, 1 n/a" ||
  fail "missing output summary: $out"
# held to the contract it keeps (two K halves past M = 32): variant at M 33 as predicted, exit 0
printf 'when M>32: ordered(2)\nordered(1)\n' > "$WORK/split.contract"
out=$(inv --measure "bundle:$WORK/split" --contract "$WORK/split.contract"); rc=$?
[ $rc = 0 ] || fail "split with its contract exit $rc (0 expected): $out"
echo "$out" | grep -q "M 33: variant at M 33 (3 rows, [0-9]* of [0-9]* outputs, max [0-9]* ULP); declared contract predicts variant$" ||
  fail "split with its contract at M 33: $out"
echo "$out" | grep -q "M 32: invariant at M 32 .*predicts invariant$" || fail "split with its contract at M 32: $out"
out=$(inv --contract "$WORK/split.contract" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "contract applies to --measure only" || fail "--contract alone: $rc $out"
printf 'when M>>32: ordered(2)\n' > "$WORK/bad.contract"
out=$(inv --measure "bundle:$WORK/split" --contract "$WORK/bad.contract" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "^a4w4check: invariance: --contract: contract file .*bad.contract: line 1" ||
  fail "bad contract file: $rc $out"
# a call the kernel failed on (the outputs manifest's "failed"): that measurement FAILED, exit 1
"$PY" - "$WORK/split" <<'PY' || fail "editing the manifest"
import json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
name = "invariance_m2_n64_k512_reversed"
m["cases"].remove(name)
m["failed"][name] = "RuntimeError: planted"
os.remove(os.path.join(d, name + ".safetensors"))
json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
PY
out=$(inv --measure "bundle:$WORK/split"); rc=$?
[ $rc = 1 ] || fail "failed call exit $rc (1 expected): $out"
echo "$out" | grep -q "M 2: FAILED: .*invariance_m2_n64_k512_reversed.*RuntimeError: planted" ||
  fail "failed call line: $out"
echo "$out" | grep -q "M 33: variant at M 33" || fail "after a failed call: $out"
# outputs of another measurement set: refused, one line, exit 2
out=$("$CLI" invariance --shapes "$WORK/pairs.csv" --m 1,2 --measure "bundle:$WORK/split" 2>&1); rc=$?
[ $rc = 2 ] || fail "other --m exit $rc (2 expected): $out"
echo "$out" | grep -q "export the operands with the same --cases or --shapes and --m" || fail "other --m line: $out"

if "$PY" -c 'import torch' 2>/dev/null; then
  # fp32 sgemm on the CPU: where its blocking makes rows differ with M or position depends on
  # the BLAS and the CPU, so the test asks for a deterministic verdict at every M (invariant
  # at M 1, where the batch is the row alone) and shows each line; exit 1 where it is variant
  # (its declared ordered(1) then DISAGREES)
  # in one command: python -m a4w4check.invariance exports, runs the kernel, judges
  out=$("$PY" -m a4w4check.invariance --cli "$CLI" --kernel inv_kernels:torch_matmul \
    --contract "ordered(1)" --device cpu --shapes "$WORK/pairs.csv" --m $M --work "$WORK/torch"); rc=$?
  echo "$out"
  [ $rc = 0 ] || [ $rc = 1 ] || fail "torch measured exit $rc: $out"
  echo "$out" | grep -q "M 1: invariant at M 1 " || fail "torch at M 1: $out"
  [ "$(echo "$out" | grep -c "N 64 K 512 M [0-9]*: \(invariant\|variant\) at M ")" = 5 ] ||
    fail "torch: not one deterministic verdict per M: $out"
  echo "$out" | grep -q ": 5 measurements, [0-9]* disagree with their prediction or failed, 0 n/a" ||
    fail "torch summary: $out"
else
  echo "invariance_bridge: torch is not importable by $PY: torch.matmul not measured"
fi
echo "invariance_bridge: ok"
