#!/usr/bin/env bash
# ci/gpu-invariance.sh OUT — batch invariance measured on a GPU host (docs/cli/invariance.md):
#  1. the matrix-unit kernels on the tiles AITER's dispatch picks: `a4w4check invariance
#     --measure hip-mma:dispatch --follows-dispatch` over the (N, K) pairs of a shape list at
#     the dispatcher's M edges (each padded-M bucket's last M and the M past it), held to
#     both predictions (the backend's contract and the tables');
#  2. torch/cuBLAS bf16 on the dequantized MX operands (`python3 -m a4w4check.invariance
#     --kernel torch-dequant-bf16 --device cuda`, declared exact) at M 1..16 and each side of
#     the buckets up to 257, with --discover-breaks: `a4w4check discover` at both M of every
#     break torch shows, the contracts found written as per-M rules, and the same outputs
#     judged again by them.
# Writes OUT/invariance.md (the card, each step's exit and seconds, the measurements' summary
# lines and every line that disagrees or is n/a, the breaks with the contracts discovered on
# both sides, the rules and their rejudgement), OUT/hip-mma/results.json and
# OUT/torch/judged/results.json, and every step's log under OUT. Every step runs under
# `timeout`; no step starts after A4W4_INV_SECONDS (default 200) and each is cut to what is
# left, so the whole run ends within that plus a few seconds.
#
# Needs the CLI built (A4W4CHECK, default build/a4w4check; for step 1 with -DA4W4_GPU) and
# python3 with torch. Environment (defaults in brackets):
#   A4W4_INV_BACKEND   [hip-mma:dispatch]  step 1's backend (a CPU one dry-runs the script:
#                      cpu-asm follows the dispatch too)
#   A4W4_INV_SHAPES    [cases/route_shapes.csv]  step 1's pairs
#   A4W4_INV_M         [1,2,16,17,32,33,64,65,128,129,256,257]  step 1's M
#   A4W4_INV_KERNEL    [torch-dequant-bf16]  step 2's runner kernel (kernels.py name or
#                      module:function)   A4W4_INV_CONTRACT [exact]  what it declares
#   A4W4_INV_TORCH_SHAPES [the first two pairs of A4W4_INV_SHAPES with K >= 4096]
#   A4W4_INV_TORCH_M   [1..17,31,32,33,63,64,65,127,128,129,255,256,257]
#   A4W4_INV_DEVICE    [cuda]   A4W4_PYTHON [python3]   A4W4_INV_SECONDS [200]
#   A4W4_INV_DISCOVER_SECONDS [70]  each discover call (one per pair with breaks)
# Exit: 0 when the summary was written (the findings are in it), 2 bad usage.
set -u
out=${1:?usage: ci/gpu-invariance.sh OUT}
cli=${A4W4CHECK:-build/a4w4check}
py=${A4W4_PYTHON:-python3}
backend=${A4W4_INV_BACKEND:-hip-mma:dispatch}
src=$(cd "$(dirname "$0")/.." && pwd)
shapes=${A4W4_INV_SHAPES:-$src/cases/route_shapes.csv}
mlist=${A4W4_INV_M:-1,2,16,17,32,33,64,65,128,129,256,257}
kernel=${A4W4_INV_KERNEL:-torch-dequant-bf16}
contract=${A4W4_INV_CONTRACT:-exact}
tm=${A4W4_INV_TORCH_M:-$(seq -s, 1 17),31,32,33,63,64,65,127,128,129,255,256,257}
device=${A4W4_INV_DEVICE:-cuda}
budget=${A4W4_INV_SECONDS:-200}
disc_s=${A4W4_INV_DISCOVER_SECONDS:-70}
[ -x "$cli" ] || { echo "gpu-invariance: no CLI at $cli (build it, or set A4W4CHECK)"; exit 2; }
[ -f "$shapes" ] || { echo "gpu-invariance: no shape list $shapes"; exit 2; }
cli=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")
shapes=$(cd "$(dirname "$shapes")" && pwd)/$(basename "$shapes")
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
rm -rf "$out/torch" "$out/hip-mma"
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 \
  PYTHONDONTWRITEBYTECODE=1
start=$SECONDS
: > "$out/steps.tsv"
: > "$out/steps.log"

# log and step (budgeted, logged under OUT): ci/steps.sh
. "$src/ci/steps.sh"

if [ -n "${A4W4_INV_TORCH_SHAPES:-}" ]; then
  tshapes=$A4W4_INV_TORCH_SHAPES
else  # the first two pairs of the list with K >= 4096 (a bounded subset for torch's ~30 M)
  tshapes=$out/torch-shapes.csv
  awk -F, 'NR == 1 { print; for (i = 1; i <= NF; i++) c[$i] = i; next }
           $c["K"] >= 4096 && !seen[$c["N"] "," $c["K"]]++ && n++ < 2' "$shapes" > "$tshapes"
fi
log "gpu-invariance: $backend on $(basename "$shapes") at M $mlist; $kernel on $device at" \
  "$(($(wc -l < "$tshapes") - 1)) pairs, M $tm; budget $budget s"
step hip-mma 60 "$cli" invariance --measure "$backend" --follows-dispatch --shapes "$shapes" \
  --m "$mlist" --out "$out/hip-mma"
npairs=$(($(wc -l < "$tshapes") - 1))
step torch $((60 + npairs * (disc_s + 10))) "$py" -m a4w4check.invariance --cli "$cli" \
  --kernel "$kernel" --contract "$contract" --device "$device" --shapes "$tshapes" --m "$tm" \
  --work "$out/torch" --discover-breaks --discover-timeout "$disc_s"
# the versions for the summary: a step too (importing torch takes seconds), skipped when the
# budget is spent, so the summary itself only reads files
step versions 30 "$py" -c 'import torch; print(torch.__version__, torch.version.cuda)'

# per_m FILE: one line per (N, K) of a measurement's results.json, its verdict at each M
per_m() {
  timeout 20 "$py" - "$1" <<'PY' 2>&1
import json, sys
ms = json.load(open(sys.argv[1]))["invariance"]["measurements"]
by = {}
for m in ms:
    by.setdefault((m["N"], m["K"]), []).append(m)
for (n, k), v in sorted(by.items()):
    cells = ", ".join(f'{m["M"]} {m["verdict"]}' for m in sorted(v, key=lambda m: m["M"]))
    print(f"- N {n} K {k}: {cells}")
PY
}
# summary: OUT/invariance.md from the steps' logs and documents
summary() {
  local card torch_v
  card=$(nvidia-smi -L 2>/dev/null | head -n1)
  torch_v=$(tail -n 1 "$out/versions.log" 2>/dev/null)
  echo "# Batch invariance measured on ${card:-no GPU (a dry run on the CPU)}"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'); torch ${torch_v:-(not read: the versions step was skipped)}; $("$cli" --version 2>&1 | head -n1);" \
    "budget $budget s, $((SECONDS - start)) s used"
  echo
  echo "| step | exit | seconds |"
  echo "|---|---|---|"
  awk -F'\t' '{ printf "| %s | %s | %s |\n", $1, $2, $3 }' "$out/steps.tsv"
  echo
  echo "## $backend at M $mlist (--follows-dispatch)"
  echo
  grep -E "^$backend: [0-9]+ measurements" "$out/hip-mma.log" | sed 's/^/- /'
  grep -E "DISAGREES|: n/a at|FAILED" "$out/hip-mma.log" | head -40 | sed 's/^/- /'
  [ -s "$out/hip-mma/results.json" ] && per_m "$out/hip-mma/results.json"
  echo
  echo "## $kernel on $device (declared $contract), breaks discovered"
  echo
  [ -s "$out/torch/judged/results.json" ] && per_m "$out/torch/judged/results.json"
  grep -E "^bundle:.*: [0-9]+ measurements" "$out/torch.log" | head -1 |
    sed 's/^/- declared: /'
  grep -E "^a4w4check.invariance: " "$out/torch.log" | sed 's/^a4w4check.invariance: /- /'
  if [ -s "$out/torch/breaks.contract" ]; then
    echo; echo '```'; cat "$out/torch/breaks.contract"; echo '```'; echo
    grep -E "^bundle:.*: [0-9]+ measurements" "$out/torch.log" | sed -n 2p |
      sed 's/^/- held to the discovered rules: /'
    sed -n '/per-M rules/,$p' "$out/torch.log" | grep -E "DISAGREES" | head -20 | sed 's/^/- /'
  fi
  grep -E "Error|error:|Traceback" "$out/torch.log" | head -5 | sed 's/^/- torch step: /'
}
summary > "$out/invariance.md" 2> "$out/summary.log" ||
  { log "summary failed: $(cat "$out/summary.log")"; exit 2; }
grep -E '^- .*(measurements|discovered|rules)' "$out/invariance.md" | tee -a "$out/steps.log"
log "gpu-invariance: $out/invariance.md written ($((SECONDS - start)) s)"
exit 0
