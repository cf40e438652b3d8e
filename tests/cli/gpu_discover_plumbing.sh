#!/usr/bin/env bash
# ci/gpu-discover.sh's plumbing on the CPU (its GPU kernels need a device): three runner
# kernels, torch-dequant (float64 sums: a node that adds its inputs one after another, outside
# the tree family), a numpy kernel keeping ordered(1) and one whose split count changes with K
# as cuBLAS's does (one part up to K 288, three parts aligned to 64 above; python/tests/helpers.py),
# at one small shape, judged on the cases it writes at the probed shape (OUT/discovered.csv,
# one per regime), at shapes not probed (OUT/unprobed.csv) and on three pre-merge cases. The
# report must hold the kernels' discovery rows (ordered(1); no tree fits) with their defects
# column, the split-count kernel's rule of K (its `when K<=288` piece, the K the bisection
# read, its validation at shapes not probed), the judged shares of the declared-exact runs, the
# discovered contract's runs (every output judged, a pass, at the unprobed shapes too), every
# step's exit and time, and the script must print the judged shares. E8M0 code 0 is read as
# 2^-127, as the kernels read it (contracts §1).
# Two runs of the script, both on the same sets: torch-dequant (which needs torch) alone in
# OUT_TORCH, the two numpy kernels in OUT with torch hidden from their Python (a `torch` module
# that raises ImportError, first on PYTHONPATH). Every runner call is a process, and importing
# torch is about 2 of its 2.3 CPU seconds here; the numpy kernels compute the same outputs from
# numpy operands (a4w4check.external hands numpy arrays where torch is absent, docs/bridge.md),
# so each of their 12 calls (6 discover rounds, 6 `external` runs) costs about 0.3 s, and
# the script's two operand paths, torch and numpy, both run.
# Usage: gpu_discover_plumbing.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
fail() { echo "gpu_discover_plumbing: $*"; cat "$WORK/out/steps.log" 2>/dev/null; exit 1; }
{ grep -m1 "^name," "$SRC/cases/premerge.csv"
  grep -E "^(s_m1_n256_k288|t_m33_n256_k512|w_m33_n256_k512|nr_m3_n24_k512)," "$SRC/cases/premerge.csv" | head -3
} > "$WORK/cases.csv"
[ "$(wc -l < "$WORK/cases.csv")" -ge 3 ] || fail "no pre-merge cases picked: $(cat "$WORK/cases.csv")"
mkdir -p "$WORK/notorch"
cat > "$WORK/notorch/torch.py" <<PY
import os
with open("$WORK/notorch/met", "a") as f:  # the pid of each process that asked for torch
    f.write("%d\\n" % os.getpid())
raise ImportError("torch is hidden from the numpy kernels (tests/cli/gpu_discover_plumbing.sh)")
PY
discover() { # OUT PYTHONPATH KERNELS
  A4W4CHECK=$CLI A4W4_PYTHON=/usr/bin/python3 PYTHONPATH="$2" \
  A4W4_DISCOVER_KERNELS="$3" A4W4_DISCOVER_SHAPES=16x8x512 \
  A4W4_DISCOVER_DEVICE=cpu A4W4_DISCOVER_SETS="discovered unprobed $WORK/cases.csv" A4W4_DISCOVER_SECONDS=600 \
  A4W4_DISCOVER_UNPROBED=16x8x416,15x8x800 \
  A4W4_DISCOVER_E8M0_CODE0=2^-127 \
    bash "$SRC/ci/gpu-discover.sh" "$WORK/$1" > "$WORK/$1.log" 2>&1 || fail "$1: exit $?: $(cat "$WORK/$1.log")"
  [ -s "$WORK/$1/discover.md" ] || fail "$1: no report"
}
discover out "$WORK/notorch:$SRC/python/tests" "helpers:ordered1_gemm helpers:splitk_gemm"
discover out_torch "$SRC/python/tests" torch-dequant
# the numpy kernels' runner calls (6 discover rounds, 6 external runs) asked for torch and met
# the hidden module: they ran on numpy operands
met=$(sort -u "$WORK/notorch/met" 2>/dev/null | wc -l)
[ "$met" -ge 12 ] || fail "torch was hidden from $met runner processes, expected 12 or more"
md=$WORK/out/discover.md mdt=$WORK/out_torch/discover.md
grep -q '^| helpers:ordered1_gemm | 16x8x512 | `ordered(1)` | 0 | [0-9]' "$md" || fail "no ordered(1) row: $(cat "$md")"
[ "$(grep -c '^d_[a-z0-9]*_m16_n8_k512,16,8,512,' "$WORK/out/discovered.csv")" = 4 ] \
  || fail "discovered.csv does not hold one case per regime at 16x8x512: $(cat "$WORK/out/discovered.csv")"
drow=$(grep '^| helpers:ordered1_gemm | discovered |' "$md") || fail "no judged row for the discovered set: $(cat "$md")"
echo "$drow" | awk -F'|' '{print $5}' | grep -q '100.0 %' || fail "the discovered set was not judged whole: $drow"
echo "$drow" | grep -q 'PASS (0 failing' || fail "the discovered set's run did not pass: $drow"
grep -q '^| helpers:ordered1_gemm | discovered |' "$WORK/out.log" || fail "the judged shares were not printed: $(cat "$WORK/out.log")"
grep -q '^| torch-dequant | 16x8x512 | `no tree in the model family fits' "$mdt" || fail "no outside-family row: $(cat "$mdt")"
# the rules of the shape as discover wrote them: the rule of K and the shapes only validated
sed -n '/^## Rules of the shape/,/^## Judged/p' "$md" > "$WORK/rules.md"
sed -n '/^## Rules of the shape/,/^## Judged/p' "$mdt" > "$WORK/rules_torch.md"
grep -q '^# rules of K validated (not probed) at 16x8x' "$WORK/rules.md" && grep -q '^ordered(1)$' "$WORK/rules.md" &&
  grep -q '^\*\*torch-dequant (closest, not accepted)\*\*' "$WORK/rules_torch.md" ||
  fail "no rules of the shape: $(cat "$md" "$mdt")"
grep -q "no single rounding" "$mdt" || fail "the outside-family evidence is missing: $(cat "$mdt")"
# the split count as a function of K: one part up to K 288, three above; the bisection read K
# 320 between the probed 288 and 480; the rule validated at shapes not probed and judged at the
# unprobed ones (K 416 and 800, never probed), every output, a pass
sed -n '/^## Rule of K/,/^## Judged/p' "$md" > "$WORK/rulek.md"
grep -q '^- \*\*helpers:splitk_gemm\*\*: a split count that changes with K; [1-9][0-9]* K read by the bisection' "$WORK/rulek.md" &&
  grep -q '^  - `when K<=288: ordered(1)`$' "$WORK/rulek.md" &&
  grep -q '^  - `tree(.*split=3,combine=chain,final=rne,align=64)`$' "$WORK/rulek.md" &&
  grep -q '^  - validated at 16x8x672 (not probed): the rule of K holds: tree(.*split=3' "$WORK/rulek.md" ||
  fail "no rule of K for the split-count kernel: $(cat "$WORK/rulek.md")"
urow=$(grep '^| helpers:splitk_gemm | unprobed |' "$md") || fail "no unprobed row: $(cat "$md")"
echo "$urow" | awk -F'|' '{print $5}' | grep -q '100.0 %' || fail "the unprobed shapes were not judged whole: $urow"
echo "$urow" | grep -q 'PASS (0 failing' || fail "the unprobed shapes' run did not pass: $urow"
row=$(grep '^| helpers:ordered1_gemm | cases |' "$md") || fail "no judged row: $(cat "$md")"
echo "$row" | grep -q '| [0-9.]* % (' || fail "no judged share for the exact run: $row"
echo "$row" | awk -F'|' '{print $5}' | grep -q '100.0 %' || fail "discovered contract did not judge every output: $row"
echo "$row" | grep -q 'PASS (0 failing' || fail "discovered contract's run did not pass: $row"
grep '^| torch-dequant | cases |' "$mdt" | grep -q "the closest candidate: not accepted" \
  || fail "torch-dequant was not judged by its closest candidate, marked so: $(cat "$mdt")"
for s in discover-helpers_ordered1_gemm export-cases export-discovered \
  run-cases-helpers_ordered1_gemm-exact run-discovered-helpers_ordered1_gemm-discovered; do
  grep -q "^$s	" "$WORK/out/steps.tsv" || fail "step $s not recorded"
done
for s in discover-torch-dequant external-cases-torch-dequant run-cases-torch-dequant-discovered; do
  grep -q "^$s	" "$WORK/out_torch/steps.tsv" || fail "step $s not recorded"
done
# bounded: with an 8 s budget the discovery is cut at what is left, every later step is
# skipped, and the report still comes, all within the budget plus a few seconds
t0=$SECONDS
A4W4CHECK=$CLI A4W4_PYTHON=/usr/bin/python3 PYTHONPATH="$SRC/python/tests" \
A4W4_DISCOVER_KERNELS="helpers:ordered1_gemm" A4W4_DISCOVER_SHAPES=16x8x512 \
A4W4_DISCOVER_DEVICE=cpu A4W4_DISCOVER_SECONDS=8 \
  bash "$SRC/ci/gpu-discover.sh" "$WORK/short" > "$WORK/short.log" 2>&1 || fail "short: exit $?: $(cat "$WORK/short.log")"
took=$((SECONDS - t0))
[ "$took" -le 25 ] || fail "an 8 s budget took $took s: $(cat "$WORK/short/steps.log")"
grep -q "skipped" "$WORK/short/steps.tsv" || fail "short: no step was skipped: $(cat "$WORK/short/steps.tsv")"
[ -s "$WORK/short/discover.md" ] || fail "short: no report"
echo "gpu_discover_plumbing: report written: $(grep -c '^| ' "$md") table rows; an 8 s budget ended in $took s"
