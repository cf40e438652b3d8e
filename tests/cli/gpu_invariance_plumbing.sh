#!/usr/bin/env bash
# ci/gpu-invariance.sh's plumbing on the CPU (its GPU backend and cuBLAS need a device): step 1
# with cpu-asm (a CPU system under test that follows the dispatch) in place of
# hip-mma:dispatch, step 2 with a numpy kernel in place of torch that keeps ordered(1) up to
# M = 32 and adds two K halves past it (declaring ordered(1)). The summary must hold each
# step's exit, step 1's measurements as both predictions say, step 2's break found at M 32 ->
# 33, the contracts discover accepts on its two sides (ordered(1), ordered(2): what the kernel
# does), the per-M rules made of them, and the same outputs judged again by those rules with
# none disagreeing. With an 8 s budget every step that does not fit is skipped and the
# summary still comes, within the budget plus a few seconds.
# Usage: gpu_invariance_plumbing.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "gpu_invariance_plumbing: $*"; cat "$WORK/out/steps.log" 2>/dev/null; exit 1; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "gpu_invariance_plumbing: no numpy for $PY: skipped"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK/kern"
cat > "$WORK/kern/split_kern.py" <<'PY'
"""ordered(1) up to M = 32, K in two halves (each ordered(1), then added) past it."""
import numpy as np
from a4w4check.numerics import dequant, f64_to_bf16


def _blocks(A, W, lo, hi):
    total = np.zeros((A.shape[0], W.shape[0]), dtype=np.float32)
    for k in range(lo, hi, 32):
        total += (A[:, k:k + 32] @ W[:, k:k + 32].T).astype(np.float32)
    return total


def split_past_32(a_fp4, a_scale, w_fp4, w_scale, **rest):
    host = lambda t: np.asarray(t, dtype=np.uint8)
    A, W = dequant(host(a_fp4), host(a_scale)), dequant(host(w_fp4), host(w_scale))
    K = A.shape[1]
    if A.shape[0] <= 32:
        return f64_to_bf16(_blocks(A, W, 0, K).astype(np.float64))
    h = K // 64 * 32
    return f64_to_bf16((_blocks(A, W, 0, h) + _blocks(A, W, h, K)).astype(np.float64))
PY
printf 'M,N,K\n1,64,1024\n1,512,4096\n' > "$WORK/pairs.csv"
printf 'M,N,K\n1,64,512\n' > "$WORK/torch.csv"
run() {
  A4W4CHECK=$CLI A4W4_PYTHON=$PY PYTHONPATH="$WORK/kern" A4W4_INV_BACKEND=cpu-asm \
  A4W4_INV_SHAPES="$WORK/pairs.csv" A4W4_INV_M=1,64,65 A4W4_INV_KERNEL=split_kern:split_past_32 \
  A4W4_INV_CONTRACT="ordered(1)" A4W4_INV_TORCH_SHAPES="$WORK/torch.csv" A4W4_INV_TORCH_M=1,2,32,33 \
  A4W4_INV_DEVICE=cpu env "$@"
}
run A4W4_INV_SECONDS=600 bash "$SRC/ci/gpu-invariance.sh" "$WORK/out" > "$WORK/log" 2>&1 ||
  fail "exit $?: $(cat "$WORK/log")"
md=$WORK/out/invariance.md
[ -s "$md" ] || fail "no summary"
cat "$md"
for s in hip-mma torch; do
  grep -q "^| $s | 0 | [0-9]* |$" "$md" || fail "step $s did not exit 0: $(cat "$md")"
done
grep -q "^- cpu-asm: 6 measurements, 0 disagree with their prediction or failed, 0 n/a$" "$md" ||
  fail "step 1's measurements: $(cat "$md")"
grep -q "^- N 512 K 4096: 1 invariant, 64 invariant, 65 invariant$" "$md" || fail "step 1's map: $(cat "$md")"
grep -q "^- N 64 K 512: 1 invariant, 2 invariant, 32 invariant, 33 variant$" "$md" ||
  fail "step 2's measurement: $(cat "$md")"
grep -q "^- N 64 K 512 M 32: discovered ordered(1) (accepted)$" "$md" || fail "M 32's contract: $(cat "$md")"
grep -q "^- N 64 K 512 M 33: discovered ordered(2) (accepted)$" "$md" || fail "M 33's contract: $(cat "$md")"
grep -q "^when N==64,K==512,M>32: ordered(2)$" "$md" && grep -q "^when N==64,K==512: ordered(1)$" "$md" ||
  fail "the per-M rules: $(cat "$md")"
grep -q "^- held to the discovered rules: .*: 4 measurements, 0 disagree with their prediction or failed, 0 n/a$" "$md" ||
  fail "the rejudgement: $(cat "$md")"
grep -q "discovered ordered(2)" "$WORK/log" || fail "the findings were not printed: $(cat "$WORK/log")"
# bounded: with an 8 s budget the steps that do not fit are skipped, the summary still comes
t0=$SECONDS
run A4W4_INV_SECONDS=8 bash "$SRC/ci/gpu-invariance.sh" "$WORK/short" > "$WORK/short.log" 2>&1 ||
  fail "short: exit $?: $(cat "$WORK/short.log")"
took=$((SECONDS - t0))
[ "$took" -le 30 ] || fail "an 8 s budget took $took s: $(cat "$WORK/short/steps.log")"
grep -q "	skipped	" "$WORK/short/steps.tsv" || grep -q "	124	" "$WORK/short/steps.tsv" ||
  fail "short: no step was skipped or cut: $(cat "$WORK/short/steps.tsv")"
[ -s "$WORK/short/invariance.md" ] || fail "short: no summary"
echo "gpu_invariance_plumbing: summary written; an 8 s budget ended in $took s"
