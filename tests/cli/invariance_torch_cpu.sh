#!/usr/bin/env bash
# Batch invariance of torch on the CPU (torch.matmul in fp32 on the dequantized operands), held
# to the contract discover finds for it: python -m a4w4check.invariance --discover-breaks
# measures at M 1..5, 8, 16, 17, 32, 33 and 40, probes `a4w4check discover` (the runner is the
# same kernel) at both M of every break, writes the contracts found as per-M rules and judges
# the same outputs again by them. Where the measurement breaks depends on the BLAS and the CPU,
# so the test asks that: the rejudgement agrees at every M (exit 0, no n/a), each prediction
# is a decided one (invariant or variant, never unknown), the two sides of every break got
# different contracts, and the rules are not vacuous: the contract of the smallest M alone
# (what a kernel without breaks would keep) DISAGREES wherever the measurement is variant.
# Skipped (exit 77) with the reason when Debian's python3 has no torch (ci/setup.sh installs
# python3-torch).
# Usage: invariance_torch_cpu.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "invariance_torch_cpu: $*"; exit 1; }
"$PY" -c 'import torch, numpy' 2>/dev/null ||
  { echo "invariance_torch_cpu: torch (or numpy) is not importable by $PY: skipped"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK/kern"
export PYTHONPATH="$SRC/python:$WORK/kern" PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1
cat > "$WORK/kern/torch_cpu.py" <<'PY'
"""torch.matmul in fp32 on the CPU, on the dequantized operands, rounded to bf16."""
import numpy as np
from a4w4check.numerics import dequant


def matmul(a_fp4, a_scale, w_fp4, w_scale, **rest):
    import torch
    host = lambda t: np.asarray(t.cpu() if hasattr(t, "cpu") else t, dtype=np.uint8)
    with np.errstate(over="ignore"):  # the wide regime's elements past fp32: inf, as torch
        A = dequant(host(a_fp4), host(a_scale)).astype(np.float32)
        W = dequant(host(w_fp4), host(w_scale)).astype(np.float32)
    return (torch.from_numpy(A) @ torch.from_numpy(W).T).to(torch.bfloat16)


matmul.a4w4_contract = "ordered(1)"
PY
printf 'M,N,K\n1,64,512\n' > "$WORK/pairs.csv"
M=1,2,3,4,5,8,16,17,32,33,40
out=$("$PY" -m a4w4check.invariance --cli "$CLI" --kernel torch_cpu:matmul --device cpu \
  --shapes "$WORK/pairs.csv" --m $M --work "$WORK/w" --discover-breaks 2>"$WORK/stderr"); rc=$?
echo "$out"
[ $rc = 0 ] || fail "exit $rc (0 expected): $(tail -5 "$WORK/stderr")"
rules=$WORK/w/breaks.contract
[ -s "$rules" ] || fail "no per-M rules written"
cat "$rules"
rejudged=$(echo "$out" | sed -n '/the per-M rules:/,$p')
decided="N 64 K 512 M [0-9]*: \(invariant\|variant\) at M [0-9]* .*; declared contract predicts"
[ "$(echo "$rejudged" | grep -c "$decided \(invariant\|variant\)$")" = 11 ] ||
  fail "not 11 decided predictions that agree: $rejudged"
echo "$rejudged" | grep -q ": 11 measurements, 0 disagree with their prediction or failed, 0 n/a" ||
  fail "rejudgement summary: $rejudged"
# both sides of every break: probed, a contract each, and the two differ
found=$(echo "$out" | grep "^a4w4check.invariance: N 64 K 512 M [0-9]*: discovered ") ||
  fail "nothing discovered: $out"
echo "$found" | grep -q "discovered nothing" && fail "a side without a contract: $found"
# both sides accepted (contracts §4.4 "torch's CPU order": an FMA chain over elements for
# M <= 3, two accumulators of even and odd elements for M >= 4). Reproducer: one element per
# node misread as P = 25, and no lanes of elements, left both sides with closest candidates
echo "$found" | grep -q "not accepted" && fail "a side's contract was not accepted: $found"
nrules=$(grep -c "^when " "$rules")
[ "$nrules" = "$(echo "$found" | wc -l)" ] ||
  fail "$nrules rules for $(echo "$found" | wc -l) probed M: $(cat "$rules")"
variant=$(echo "$rejudged" | grep -c ": variant at M ")
if [ "$variant" -gt 0 ]; then
  [ "$nrules" -ge 2 ] || fail "variant at $variant M with one rule: $(cat "$rules")"
  [ "$(grep "^when " "$rules" | sed 's/^[^:]*: //' | sort -u | wc -l)" -ge 2 ] ||
    fail "discover found one contract on both sides of the breaks: $(cat "$rules")"
  # not vacuous: the smallest M's contract at every M disagrees where torch is variant
  grep "^when " "$rules" | tail -1 > "$WORK/one.contract"
  one=$("$CLI" invariance --measure "bundle:$WORK/w/outs" --shapes "$WORK/pairs.csv" --m $M \
    --contract "$WORK/one.contract"); rc=$?
  [ $rc = 1 ] || fail "one contract at every M: exit $rc (1 expected): $one"
  echo "$one" | grep -q ": 11 measurements, $variant disagree" || fail "one contract: $one"
fi
echo "invariance_torch_cpu: ok ($variant of 11 M variant; $nrules rules)"
