#!/usr/bin/env bash
# ci/gpu-discover.sh OUT — discover the accumulation order of outside kernels on a GPU host and
# judge them by it (docs/contracts.md §4.4): for each kernel, `a4w4check discover` through
# `python3 -m a4w4check.external` at a few shapes (every round run by --runner; a split count
# that changes with K is bisected there, one round per level: contracts §4.4, "The split count
# as a function of K"), then cases at exactly those shapes (OUT/discovered.csv: one per judged
# regime and shape, so every case has its shape's rule), cases at shapes discover neither
# probed nor read (OUT/unprobed.csv: judged only where the contract is a rule of the shape,
# else not judged) and any extra sets exported, run by the kernel, and judged twice with
# `run --backend bundle:` (--budget-seconds, sampled above it): as declared exact (bit for bit
# inside the exact regime only) and with the discovered contract (`run --contract
# bundle:DIR=FILE`; one rule per shape when the shapes' orders differ; where no tree fits, the
# closest candidate, marked as not accepted). Writes OUT/discover.md (the tables: kernel,
# shape, discovered contract, defects, probes, seconds; share of outputs judged bit for bit
# before and after, verdicts; nondeterministic or outside-the-family findings with their
# evidence), prints the judged shares, and keeps every step's log and file under OUT. Every
# step runs under `timeout`; no step starts after A4W4_DISCOVER_SECONDS (default 420) and each
# is cut to what is left, so the whole run ends within that plus a few seconds.
#
# Needs the CLI built (A4W4CHECK, default build/a4w4check) and python3 with torch (and Triton
# for triton-dot-scaled). Environment (defaults in brackets):
#   A4W4_DISCOVER_KERNELS  [triton-dot-scaled torch-dequant-bf16]  runner kernels (kernels.py
#                          names or module:function)
#   A4W4_DISCOVER_SHAPES   [32x256x4096,1x1024x5120,16x1024x8192]  probed, then judged
#   A4W4_DISCOVER_REGIMES  [exact normal wide code0]  the regimes of OUT/discovered.csv
#   A4W4_DISCOVER_DEVICE   [cuda]
#   A4W4_DISCOVER_UNPROBED [32x256x2560,31x256x3680,32x256x4544,16x1024x3584,2x1024x4800,
#                          16x1024x6656,16x1024x9024]  the shapes of OUT/unprobed.csv: K inside
#                          each split-count range cuBLAS showed, never probed (the bisection may
#                          read one: its log lists them)
#   A4W4_DISCOVER_SETS     [discovered unprobed]  "discovered" (OUT/discovered.csv), "unprobed"
#                          (OUT/unprobed.csv), set names under cases/ (their shapes other than
#                          the probed ones are not judged by a per-shape contract) or case-file
#                          paths
#   A4W4_DISCOVER_REPEATS  [3]   A4W4_PYTHON [python3]   A4W4_DISCOVER_SECONDS [420]
#   A4W4_DISCOVER_JUDGE_SECONDS [5]  run --budget-seconds: the whole run's host checking
#                          (the cases beyond it sampled)
#   A4W4_DISCOVER_E8M0_CODE0 []  run --e8m0-code0 (contracts §1): unset, entries on E8M0 code 0
#                          are judged under both readings (matching one only: ambiguous, the
#                          run INCOMPLETE); 2^-127 or 2^-126 states the kernels' reading
# Exit: 0 when the tables were written (the findings are in them), 2 bad usage.
set -u
out=${1:?usage: ci/gpu-discover.sh OUT}
cli=${A4W4CHECK:-build/a4w4check}
py=${A4W4_PYTHON:-python3}
kernels=${A4W4_DISCOVER_KERNELS:-triton-dot-scaled torch-dequant-bf16}
shapes=${A4W4_DISCOVER_SHAPES:-32x256x4096,1x1024x5120,16x1024x8192}
regimes=${A4W4_DISCOVER_REGIMES:-exact normal wide code0}
device=${A4W4_DISCOVER_DEVICE:-cuda}
unprobed=${A4W4_DISCOVER_UNPROBED:-32x256x2560,31x256x3680,32x256x4544,16x1024x3584,2x1024x4800,16x1024x6656,16x1024x9024}
sets=${A4W4_DISCOVER_SETS:-discovered unprobed}
repeats=${A4W4_DISCOVER_REPEATS:-3}
budget=${A4W4_DISCOVER_SECONDS:-420}
judge_s=${A4W4_DISCOVER_JUDGE_SECONDS:-5}
code0=${A4W4_DISCOVER_E8M0_CODE0:-}
src=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$cli" ] || { echo "gpu-discover: no CLI at $cli (build it, or set A4W4CHECK)"; exit 2; }
cli=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
w=$out/work
rm -rf "$w" && mkdir -p "$w"
# everything a step writes stays under OUT: no bytecode beside the sources, Triton's cache here
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 \
  PYTHONDONTWRITEBYTECODE=1 TRITON_CACHE_DIR="$w/triton-cache"
start=$SECONDS
: > "$out/steps.tsv"

# log and step (budgeted, logged under OUT): ci/steps.sh
. "$src/ci/steps.sh"
tag() { printf '%s' "$1" | sed 's/[^A-Za-z0-9_.-]/_/g'; }

log "gpu-discover: kernels [$kernels] at $shapes on $device; sets [$sets]; budget $budget s"
for k in $kernels; do
  t=$(tag "$k")
  # (a split count changing with K adds one round per bisection level: at most 24 K read
  # per family, each ceil(4 K/32 / max(M,N)) probe calls and 6 validation cases, x repeats)
  step "discover-$t" 240 "$cli" discover --backend "bundle:$w/$t/out" --probes "$w/$t/probes" \
    --runner "$py -m a4w4check.external --kernel $k --device $device" --runner-timeout 60 \
    --shapes "$shapes" --repeats "$repeats" --out "$out/$t.contract" --quiet --no-evidence
done
# the judged cases at the probed shapes (every case has its shape's rule: a per-shape contract
# leaves any other shape unjudged) and at the unprobed ones (judged by a rule of the shape
# only); seeds fixed, so a rerun judges the same operands
cases_at() { # cases_at SHAPES TAG PREFIX SEED0
  echo "name,M,N,K,regime,seed,tags"
  local i=0 sh m n kk r
  for sh in ${1//,/ }; do
    IFS=x read -r m n kk <<<"$sh"
    for r in $regimes; do
      i=$((i + 1))
      echo "${3}_${r}_m${m}_n${n}_k${kk},$m,$n,$kk,$r,$(($4 + i)),$2"
    done
  done
}
cases_at "$shapes" discovered d 91000 > "$out/discovered.csv"
cases_at "$unprobed" unprobed u 92000 > "$out/unprobed.csv"

for s in $sets; do
  [ "$s" = discovered ] && s=$out/discovered.csv
  [ "$s" = unprobed ] && s=$out/unprobed.csv
  st=$(tag "$(basename "$s" .csv)")
  # no golden bundles: they sit at shapes no per-shape contract has a rule for
  if [ -f "$s" ]; then which=(--cases "$s" --no-golden); else which=(--set "$s" --no-golden); fi
  step "export-$st" 20 "$cli" export "${which[@]}" --out "$w/ops-$st" --quiet
  for k in $kernels; do
    t=$(tag "$k")
    step "external-$st-$t" 40 "$py" -m a4w4check.external --ops "$w/ops-$st" \
      --out "$w/$t/y-$st" --kernel "$k" --device "$device" --contract exact
    step "run-$st-$t-exact" 30 "$cli" run "${which[@]}" --backend "bundle:$w/$t/y-$st" \
      --out "$out/run-$st-$t-exact" --budget-seconds "$judge_s" ${code0:+--e8m0-code0 "$code0"} --quiet
    # the accepted contract; when none was, the closest candidate (the report says so)
    c=$out/$t.contract
    [ -s "$c" ] || c=$out/$t.contract.closest
    if [ -s "$c" ]; then
      step "run-$st-$t-discovered" 45 "$cli" run "${which[@]}" --backend "bundle:$w/$t/y-$st" \
        --contract "bundle:$w/$t/y-$st=$c" \
        --out "$out/run-$st-$t-discovered" --budget-seconds "$judge_s" \
        ${code0:+--e8m0-code0 "$code0"} --quiet
    fi
  done
done

timeout 30 "$py" "$src/ci/gpu_discover_report.py" "$out" "$kernels" "$sets" "$shapes" "$budget" "$unprobed" \
  > "$out/discover.md" 2> "$out/report.log" || { log "report failed: $(cat "$out/report.log")"; exit 2; }
# the judged shares (the report's table), and the per-shape contracts' defects
sed -n '/^## Judged/,/^## Findings/p' "$out/discover.md" | grep '^| ' | tee -a "$out/steps.log"
log "gpu-discover: $out/discover.md written ($((SECONDS - start)) s)"
exit 0
