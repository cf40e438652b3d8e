#!/usr/bin/env bash
# build-standalone.sh — build the GPU check programs without the project's CMake, so no
# cJSON, OpenBLAS, libcsv or Criterion is needed (the GPU machine image has none of them).
# The GPU library sources are compiled straight into the programs (static CUDA runtime on
# NVIDIA), ref/ contributes only its oracle files, and tests/gpu/stub provides cblas_sgemm.
#
# Usage: tests/gpu/build-standalone.sh [nvidia|amd] [OUTDIR]
#   nvidia: $NVCC (default nvcc), $CUDA_ARCH (default 90)
#   amd:    $HIPCC (default hipcc), $GPU_TARGETS (default "gfx942;gfx950")
#   $CC (default cc) builds the C files.
# Produces OUTDIR/a4w4_gpu_check and OUTDIR/a4w4_gpu_emu (default OUTDIR build-gpu-standalone).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
plat=${1:-nvidia}
out=${2:-$root/build-gpu-standalone}
mkdir -p "$out/obj"
CC=${CC:-cc}

pids=()
run_bg() { "$@" & pids+=($!); }
wait_all() {
  local fail=0
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  pids=()
  [ "$fail" = 0 ] || { echo "build-standalone: a compile step failed" >&2; exit 2; }
}

cflags=(-std=c11 -O2 -g -Wall -Wextra -ffp-contract=off -D_POSIX_C_SOURCE=200809L
        -I"$root/ref" -I"$root/gpu")
for f in a4w4_formats a4w4_quant a4w4_layout a4w4_gemm; do
  run_bg "$CC" "${cflags[@]}" -I"$root/tests/gpu/stub" -c "$root/ref/$f.c" -o "$out/obj/ref_$f.o"
done
run_bg "$CC" "${cflags[@]}" -c "$root/tests/gpu/stub/cblas_stub.c" -o "$out/obj/cblas_stub.o"
run_bg "$CC" "${cflags[@]}" -DA4W4_SOURCE_DIR="\"$root\"" -c "$root/tests/gpu/a4w4_gpu_check.c" \
  -o "$out/obj/check.o"

gpu_srcs=(a4w4_gpu_api a4w4_gpu_table a4w4_gpu_quant a4w4_gpu_layout a4w4_gpu_gemm)
case "$plat" in
  nvidia)
    NVCC=${NVCC:-nvcc}
    arch=${CUDA_ARCH:-90}
    gflags=(-O2 -g -std=c++17 -arch=sm_"$arch" --fmad=false --prec-div=true --ftz=false
            -Xcompiler=-Wall,-Wextra,-ffp-contract=off -I"$root/gpu" -I"$root/ref")
    for f in "${gpu_srcs[@]}"; do
      run_bg "$NVCC" "${gflags[@]}" -x cu -c "$root/gpu/$f.hip" -o "$out/obj/gpu_$f.o"
    done
    run_bg "$NVCC" "${gflags[@]}" -DA4W4_SOURCE_DIR="\"$root\"" -x cu \
      -c "$root/tests/gpu/a4w4_gpu_emu.hip" -o "$out/obj/emu.o"
    wait_all
    LINK=("$NVCC" -arch=sm_"$arch")
    ;;
  amd)
    HIPCC=${HIPCC:-hipcc}
    targets=${GPU_TARGETS:-gfx942;gfx950}
    offload=()
    IFS=';' read -r -a tl <<<"$targets"
    for t in "${tl[@]}"; do offload+=(--offload-arch="$t"); done
    gflags=(-O2 -g -std=c++17 -x hip -Wall -Wextra -ffp-contract=off
            -fno-gpu-flush-denormals-to-zero -fno-fast-math "${offload[@]}"
            -I"$root/gpu" -I"$root/ref")
    for f in "${gpu_srcs[@]}"; do
      run_bg "$HIPCC" "${gflags[@]}" -c "$root/gpu/$f.hip" -o "$out/obj/gpu_$f.o"
    done
    run_bg "$HIPCC" "${gflags[@]}" -DA4W4_SOURCE_DIR="\"$root\"" \
      -c "$root/tests/gpu/a4w4_gpu_emu.hip" -o "$out/obj/emu.o"
    wait_all
    LINK=("$HIPCC" "${offload[@]}")
    ;;
  *)
    echo "usage: $0 [nvidia|amd] [OUTDIR]" >&2
    exit 2
    ;;
esac

ref_objs=("$out"/obj/ref_*.o "$out/obj/cblas_stub.o")
"${LINK[@]}" -o "$out/a4w4_gpu_check" "$out/obj/check.o" "$out"/obj/gpu_*.o "${ref_objs[@]}" \
  -lpthread -lm
"${LINK[@]}" -o "$out/a4w4_gpu_emu" "$out/obj/emu.o" "${ref_objs[@]}" -lpthread -lm
echo "build-standalone: $plat -> $out/a4w4_gpu_check $out/a4w4_gpu_emu"
