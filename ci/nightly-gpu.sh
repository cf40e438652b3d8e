#!/usr/bin/env bash
# ci/nightly-gpu.sh — nightly GPU check, first version: find the GPU, build for
# it, run the GPU check programs, keep the logs; exit non-zero on any mismatch.
#
#   1. GPU: $A4W4_GPU (nvidia|amd) or detected (nvidia-smi, then rocminfo). None -> exit 77.
#      NVIDIA architecture from nvidia-smi's compute capability unless $CUDA_ARCH is set;
#      AMD targets from rocminfo unless $GPU_TARGETS is set.
#   2. Build: the project's CMake (-DA4W4_GPU=...) for a4w4_gpu_check and a4w4_gpu_emu; when
#      that cannot configure or build (the GPU machine image lacks cJSON, OpenBLAS and
#      Criterion), tests/gpu/build-standalone.sh instead.
#   3. Run: a4w4_gpu_emu (CPU run of the kernels' arithmetic), a4w4_gpu_check on the full
#      matrix and the golden bundles, then the harness: `a4w4check run --set nightly` (golden
#      bundles included) on every backend — every hip-* one and the CPU ones — in $SHARDS
#      parallel shards, merged into one results.json + summary.md; with --sanitize also
#      a4w4_gpu_check --quick and `a4w4check run --set edge` on the hip backends under
#      compute-sanitizer memcheck (NVIDIA).
#
# Usage: ci/nightly-gpu.sh [--quick] [--sanitize] [--prebuilt DIR]
#   --quick       the small case matrix only (a4w4_gpu_check --quick, the edge set)
#   --sanitize    add the compute-sanitizer memcheck runs (NVIDIA)
#   --prebuilt D  skip the build; use D/a4w4_gpu_check, D/a4w4_gpu_emu and D/a4w4check
# Env: BUILD_DIR (default build-gpu-nightly), REPORT_DIR (default reports/gpu-nightly),
#      SHARDS (default nproc, at most 8), SET (default nightly; edge with --quick),
#      BACKENDS (default: every hip-* backend plus cpu-asm and cpu-fallback).
# Exit: 0 every check passed; 1 a check failed; 2 build failure; 77 no GPU found.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
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
if [ -n "$prebuilt" ]; then
  bindir=$prebuilt
  log "using prebuilt programs in $bindir"
elif cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_gpu[@]}" \
       >"$reports/cmake-configure.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" --target a4w4_gpu_check a4w4_gpu_emu a4w4check \
       >"$reports/cmake-build.log" 2>&1; then
  bindir=$build
  log "built with CMake in $build"
else
  log "CMake build unavailable here (see cmake-*.log); building standalone"
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
run_step gpu_check "$bindir/a4w4_gpu_check" "${quick[@]}" --golden "$root/cases/golden"
if [ "$sanitize" = 1 ]; then
  if [ "$plat" = nvidia ] && command -v compute-sanitizer >/dev/null 2>&1; then
    run_step memcheck compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$bindir/a4w4_gpu_check" --quick --golden "$root/cases/golden"
  else
    log "memcheck: skipped (needs NVIDIA compute-sanitizer)"
  fi
fi

# ---- 4. the harness: the nightly set on every backend ------------------------------------
cli=$bindir/a4w4check
if [ -x "$cli" ]; then
  backends=${BACKENDS:-hip-asm-32x128,hip-asm-64x256,hip-asm-128x128,hip-asm-256x256,hip-asm:dispatch,hip-asm-splitk,hip-asm-atomic,hip-fallback,hip-layout,hip-quant,cpu-asm,cpu-fallback}
  shards=${SHARDS:-$(nproc)}
  [ "$shards" -gt 8 ] && shards=8
  t0=$SECONDS
  pids=()
  for i in $(seq 1 "$shards"); do
    "$cli" run --set "$set_name" --backend "$backends" --shard "$i/$shards" \
      --out "$reports/run/s$i" --quiet >"$reports/run-s$i.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  "$cli" merge --out "$reports/run/merged" $(for i in $(seq 1 "$shards"); do echo "$reports/run/s$i"; done) \
    >"$reports/merge.log" 2>&1
  rc=$?
  log "harness run --set $set_name on $backends in $shards shards: merge exit $rc ($((SECONDS - t0)) s) — $(tail -n1 "$reports/merge.log")"
  [ $rc -ne 0 ] && status=1 && grep -A3 '^## Failures' "$reports/run/merged/summary.md" | head -n 20
  if [ "$sanitize" = 1 ] && [ "$plat" = nvidia ] && command -v compute-sanitizer >/dev/null 2>&1; then
    run_step memcheck_harness compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$cli" run --set edge --no-golden --backend "${backends//,cpu-asm,cpu-fallback/}" \
      --out "$reports/run/memcheck" --quiet
  fi
else
  log "harness: $cli not built; skipped"
  status=1
fi
log "$([ $status = 0 ] && echo PASS || echo FAIL); logs in $reports"
exit $status
