#!/usr/bin/env bash
# ci/nightly-gpu.sh — the nightly GPU check on one host: find the GPUs, build for them, run
# the GPU check programs, then the harness in shard groups, one process per GPU (its operands
# generated once on its cores and shared by every HIP backend, every output judged on the
# device), merged into one verdict; keep the logs; exit non-zero on any mismatch. Across hosts the GitHub workflow
# .github/workflows/nightly-gpu.yml runs the same two steps (ci/nightly-shard.sh per job,
# ci/nightly-merge.sh once).
#
#   1. GPU: $A4W4_GPU (nvidia|amd) or detected (nvidia-smi, then rocminfo). None -> exit 77.
#      NVIDIA architecture from nvidia-smi's compute capability unless $CUDA_ARCH is set;
#      AMD targets from rocminfo unless $GPU_TARGETS is set.
#   2. Build: ci/find-deps.sh first (cJSON, OpenBLAS, libcsv; $A4W4_DEPS_PREFIX: a prefix of
#      unpacked packages): a missing library stops the nightly with exit 2 and one line per
#      library saying how to provide it. Then the project's CMake with -DBUILD_TESTING=OFF (no
#      Criterion needed) and -DA4W4_GPU=... for a4w4_gpu_check, a4w4_gpu_emu and a4w4check;
#      when that fails, tests/gpu/build-standalone.sh builds the GPU check programs alone
#      (no harness: the nightly then FAILs).
#   3. Run: a4w4_gpu_emu and a4w4_judge_emu (CPU runs of the kernels' and the judge's
#      arithmetic), a4w4_gpu_check on the full matrix and the golden bundles (the plain and the
#      matrix-unit kernels against the C oracles), a4w4_judge_check (the GPU judge against the
#      C oracles), a4w4_wgen_check (W made on the device against the host's generator); with --sanitize also a4w4_gpu_check --quick under compute-sanitizer memcheck
#      (NVIDIA).
#   4. The harness: `a4w4check run --set nightly` (golden bundles included) on every backend
#      — every hip-* one and the CPU ones — in G = GPUs x GROUPS_PER_GPU shard groups, group g
#      (ci/nightly-shard.sh --group g/G) pinned to one GPU with CUDA_VISIBLE_DEVICES /
#      HIP_VISIBLE_DEVICES, all at once; then ci/nightly-merge.sh: one results.json,
#      summary.md, junit.xml, report.html, groups.md. Prints each group's wall time (the
#      balance) and the merged verdict, then the harness step's wall, the merged stage table
#      (results.json "stages", summed over the groups) and the GPU utilization nvidia-smi
#      sampled every 500 ms during the step (gpu-util.csv; per GPU the mean, the median and
#      the share of samples above 50 %). With --sanitize also `a4w4check run --set edge` on the
#      hip backends under compute-sanitizer memcheck.
#
# Usage: ci/nightly-gpu.sh [--quick] [--sanitize] [--prebuilt DIR]
#   --quick       the small case matrix only (a4w4_gpu_check --quick, the edge set)
#   --sanitize    add the compute-sanitizer memcheck runs (NVIDIA)
#   --prebuilt D  skip the build; use D/a4w4_gpu_check, D/a4w4_gpu_emu and D/a4w4check
# Env: BUILD_DIR (default build-gpu-nightly), REPORT_DIR (default reports/gpu-nightly),
#      GPUS (default: nvidia-smi -L / rocminfo's count, or the entries of an inherited
#      CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES), GROUPS_PER_GPU (default 1: one process per
#      GPU; SHARDS is its old name), SET (default nightly; edge with --quick), BACKENDS
#      (default: the hip-mma-* GEMMs, hip-layout, hip-quant, cpu-asm and cpu-fallback),
#      RUN_ARGS (more `run` options, e.g. --budget-seconds S), A4W4_DEPS_PREFIX (see
#      ci/find-deps.sh), E8M0_CODE0 (unset: entries on E8M0 code 0 judged under each
#      backend's declared reading, the HIP GEMMs' and the CPU backends' 2^-127, and under both
#      readings for an undeclared one, those matching one only ambiguous; 2^-127 or 2^-126:
#      the reading the run states, `run --e8m0-code0`, docs/contracts.md §1).
# Exit: 0 every check passed; 1 a check failed; 2 missing library or build failure; 77 no GPU.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
quick=()
set_name=${SET:-nightly}
sanitize=0
prebuilt=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick); set_name=${SET:-edge} ;;
    --sanitize) sanitize=1 ;;
    --prebuilt) prebuilt=$2; shift ;;
    *) echo "usage: $0 [--quick] [--sanitize] [--prebuilt DIR]" >&2; exit 2 ;;
  esac
  shift
done
build=${BUILD_DIR:-$root/build-gpu-nightly}
reports=${REPORT_DIR:-$root/reports/gpu-nightly}
mkdir -p "$reports"
log() { echo "nightly-gpu: $*" | tee -a "$reports/nightly.log"; }
: >"$reports/nightly.log"

# ---- 1. which GPU -------------------------------------------------------------------------
plat=${A4W4_GPU:-}
if [ -z "$plat" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    plat=nvidia
  elif command -v rocminfo >/dev/null 2>&1 && rocminfo 2>/dev/null | grep -c 'gfx[0-9]' >/dev/null; then
    plat=amd
  else
    log "SKIP: no NVIDIA or AMD GPU found"
    exit 77
  fi
fi
cmake_gpu=()
case "$plat" in
  nvidia)
    if [ -z "${CUDA_ARCH:-}" ]; then
      CUDA_ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
                  head -n1 | tr -d ' .')
      CUDA_ARCH=${CUDA_ARCH:-90}
    fi
    export CUDA_ARCH
    cmake_gpu=(-DA4W4_GPU=nvidia -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH")
    if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
      export PATH=$PATH:/usr/local/cuda/bin
    fi
    log "GPU: $(nvidia-smi -L 2>/dev/null | head -n1) -> sm_$CUDA_ARCH"
    ;;
  amd)
    if [ -z "${GPU_TARGETS:-}" ]; then
      GPU_TARGETS=$(rocminfo 2>/dev/null | grep -o 'gfx[0-9a-f]*' | sort -u | paste -sd';')
    fi
    export GPU_TARGETS
    cmake_gpu=(-DA4W4_GPU=amd -DGPU_TARGETS="$GPU_TARGETS" -DAMDGPU_TARGETS="$GPU_TARGETS")
    export CXX=${CXX:-hipcc}
    log "GPU: AMD $GPU_TARGETS"
    ;;
  *) log "A4W4_GPU must be nvidia or amd (got '$plat')"; exit 2 ;;
esac

# ---- 2. build -------------------------------------------------------------------------------
# the libraries (and a prefix's environment, also for running a prebuilt CLI)
if deps=$(bash "$root/ci/find-deps.sh" 2>"$reports/find-deps.log"); then
  eval "$deps"
elif [ -z "$prebuilt" ]; then
  log "missing libraries: the nightly cannot build a4w4check here"
  tee -a "$reports/nightly.log" <"$reports/find-deps.log" >&2
  exit 2
fi
if [ -n "$prebuilt" ]; then
  bindir=$prebuilt
  log "using prebuilt programs in $bindir"
elif cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
       "${cmake_gpu[@]}" >"$reports/cmake-configure.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" --target a4w4_gpu_check a4w4_gpu_emu a4w4_judge_emu \
       a4w4_judge_check a4w4_wgen_check a4w4check \
       >"$reports/cmake-build.log" 2>&1; then
  bindir=$build
  log "built with CMake in $build"
else
  log "CMake build failed (see cmake-*.log); building the GPU check programs standalone"
  if ! bash "$root/tests/gpu/build-standalone.sh" "$plat" "$build-standalone" \
       >"$reports/standalone-build.log" 2>&1; then
    log "BUILD FAILED (standalone-build.log)"
    tail -n 30 "$reports/standalone-build.log"
    exit 2
  fi
  bindir=$build-standalone
fi

# ---- 3. run ---------------------------------------------------------------------------------
status=0
run_step() { # name, command...
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$reports/$name.log" 2>&1
  local rc=$?
  log "$name: exit $rc ($((SECONDS - t0)) s) — $(grep -E 'RESULT|ERROR SUMMARY|SKIP' "$reports/$name.log" | tail -n1)"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E '^(FAIL|NOTE)' "$reports/$name.log" | head -n 20
  fi
  return $rc
}
run_step gpu_emu "$bindir/a4w4_gpu_emu" "$root/cases/golden"
[ -x "$bindir/a4w4_judge_emu" ] && run_step judge_emu "$bindir/a4w4_judge_emu"
run_step gpu_check "$bindir/a4w4_gpu_check" "${quick[@]}" --golden "$root/cases/golden"
[ -x "$bindir/a4w4_judge_check" ] && run_step judge_check "$bindir/a4w4_judge_check" "${quick[@]}"
[ -x "$bindir/a4w4_wgen_check" ] && run_step wgen_check "$bindir/a4w4_wgen_check"
if [ "$sanitize" = 1 ]; then
  if [ "$plat" = nvidia ] && command -v compute-sanitizer >/dev/null 2>&1; then
    run_step memcheck compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$bindir/a4w4_gpu_check" --quick --golden "$root/cases/golden"
  else
    log "memcheck: skipped (needs NVIDIA compute-sanitizer)"
  fi
fi

# ---- 4. the harness: the nightly set on every backend, shard groups per GPU ---------------
# the GPUs' ids as the runtime numbers them (an inherited *_VISIBLE_DEVICES list is kept)
gpu_ids() {
  local vis=${CUDA_VISIBLE_DEVICES:-}
  [ "$plat" = amd ] && vis=${HIP_VISIBLE_DEVICES:-${ROCR_VISIBLE_DEVICES:-}}
  if [ -n "${GPUS:-}" ]; then
    if [ -n "$vis" ]; then echo "$vis" | tr ',' '\n' | head -n "$GPUS"; else seq 0 $((GPUS - 1)); fi
  elif [ -n "$vis" ]; then
    echo "$vis" | tr ',' '\n'
  elif [ "$plat" = nvidia ]; then
    seq 0 $(( $(nvidia-smi -L 2>/dev/null | grep -c '^GPU') - 1 ))
  else
    seq 0 $(( $(rocminfo 2>/dev/null | grep -cE '^[[:space:]]*Name:[[:space:]]*gfx') - 1 ))
  fi
}
run_groups() { # cli backends: G groups at once, each pinned to one GPU; sets G, dirs
  local cli=$1 backends=$2 ids ngpu per g dev pids=() pin=CUDA_VISIBLE_DEVICES
  [ "$plat" = amd ] && pin=HIP_VISIBLE_DEVICES
  mapfile -t ids < <(gpu_ids)
  ngpu=${#ids[@]}
  [ "$ngpu" -ge 1 ] || { ids=(0); ngpu=1; }
  per=${GROUPS_PER_GPU:-${SHARDS:-1}}
  G=$(( ngpu * per ))
  local threads=$(( $(nproc) / G )); [ "$threads" -ge 1 ] || threads=1
  dirs=()
  log "harness: $G shard groups ($ngpu GPU(s) x $per), set $set_name, backends $backends"
  for g in $(seq 1 "$G"); do
    dev=${ids[$(( (g - 1) % ngpu ))]}
    dirs+=("$reports/run/g$g")
    env "$pin=$dev" OMP_NUM_THREADS="$threads" A4W4CHECK="$cli" bash "$root/ci/nightly-shard.sh" \
      --group "$g/$G" --out "$reports/run/g$g" --set "$set_name" --backends "$backends" \
      -- ${E8M0_CODE0:+--e8m0-code0 "$E8M0_CODE0"} ${RUN_ARGS:-} >"$reports/group-$g.log" 2>&1 &
    pids+=($!)
  done
  for g in $(seq 1 "$G"); do
    wait "${pids[$((g - 1))]}"
    log "$(tail -n 1 "$reports/group-$g.log")" # the group's verdict; its progress stays there
  done
}
# GPU utilization while the harness runs: nvidia-smi every 500 ms into gpu-util.csv
util_start() {
  util_pid=""
  : >"$reports/gpu-util.csv"
  if [ "$plat" = nvidia ] && command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 500 \
      >"$reports/gpu-util.csv" 2>/dev/null &
    util_pid=$!
  fi
}
util_stop() { [ -n "$util_pid" ] && kill "$util_pid" 2>/dev/null; wait "$util_pid" 2>/dev/null; }
# the end of the harness step: its wall, the merged stage table, the GPU utilization summary
step_summary() { # seconds
  python3 - "$reports/run/merged/results.json" "$reports/gpu-util.csv" "$1" <<'PY' |
import json, statistics, sys
doc, util, wall = sys.argv[1], sys.argv[2], float(sys.argv[3])
print("harness wall %.0f s (the groups, before the merge)" % wall)
try:
    s = json.load(open(doc))["stages"]
    k = lambda n: s.get(n, 0.0)
    parts = ["setup", "generate", "judge", "kernels", "host_oracle", "record", "bundles",
             "write", "finish"]
    print("stages (summed over the groups): setup %.1f s, generate %.1f s, judge %.1f s, "
          "backends %.1f s (their own runs %.1f s, pad variants' runs %.1f s), host oracles "
          "%.1f s, record %.1f s, bundles %.1f s, write %.1f s, finish %.1f s = %.1f s "
          "(other %.1f s; wall of the longest group %.1f s); prefetch %.1f s beside; %.3g "
          "outputs on the device, %.3g on the host"
          % (k("setup_s"), k("generate_s"), k("judge_s"), k("kernels_s"), k("backend_runs_s"),
             k("variant_runs_s"), k("host_oracle_s"), k("record_s"), k("bundles_s"),
             k("write_s"), k("finish_s"), sum(k(p + "_s") for p in parts), k("other_s"),
             k("wall_s"), k("prefetch_s"), k("outputs_device"), k("outputs_host")))
except (OSError, ValueError, KeyError, TypeError) as e:
    print("stages: none (%s)" % e)
per = {}
for line in open(util):
    f = [x.strip() for x in line.split(",")]
    if len(f) == 2 and f[0].isdigit() and f[1].isdigit():
        per.setdefault(f[0], []).append(int(f[1]))
if not per:
    print("GPU utilization: not sampled (no nvidia-smi samples)")
for g, v in sorted(per.items()):
    print("GPU %s utilization: mean %.0f %%, median %.0f %%, above 50 %% in %.0f %% of %d "
          "samples (every 500 ms)" % (g, statistics.mean(v), statistics.median(v),
                                      100.0 * sum(x > 50 for x in v) / len(v), len(v)))
PY
  while IFS= read -r l; do log "$l"; done
}
cli=$bindir/a4w4check
if [ -x "$cli" ]; then
  backends=${BACKENDS:-hip-mma-32x128,hip-mma-64x256,hip-mma-128x128,hip-mma-256x256,hip-mma:dispatch,hip-mma-splitk,hip-mma-atomic,hip-mma-fallback,hip-layout,hip-quant,cpu-asm,cpu-fallback}
  t0=$SECONDS
  rm -rf "$reports/run"
  util_start
  run_groups "$cli" "$backends"
  util_stop
  t_groups=$((SECONDS - t0))
  A4W4CHECK=$cli bash "$root/ci/nightly-merge.sh" "$reports/run/merged" "${dirs[@]}" \
    >"$reports/merge.log" 2>&1
  rc=$?
  log "harness: $G groups merged, exit $rc ($((SECONDS - t0)) s) — $(tail -n 1 "$reports/merge.log")"
  [ $rc -ne 0 ] && status=1 && grep -A3 '^## Failures' "$reports/run/merged/summary.md" 2>/dev/null | head -n 20
  if [ "$sanitize" = 1 ] && [ "$plat" = nvidia ] && command -v compute-sanitizer >/dev/null 2>&1; then
    run_step memcheck_harness compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$cli" run --set edge --no-golden --host-judge --backend "${backends//,cpu-asm,cpu-fallback/}" \
      --out "$reports/run/memcheck" --quiet
  fi
else
  log "harness: $cli not built; skipped"
  status=1
fi
[ -n "${t_groups:-}" ] && step_summary "$t_groups"
log "$([ $status = 0 ] && echo PASS || echo FAIL); logs in $reports"
exit $status
