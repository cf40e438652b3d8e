#!/usr/bin/env bash
# ci/nightly-cpu.sh [FUZZ_SECONDS] — what the CPU nightly adds to ci/test.sh (no GPU needed):
#   build/       optimized: the tests labelled `wholeset` with A4W4_GT_FULL=1, i.e. the
#                ground-truth kernels over the whole pre-merge set (ci/test.sh runs them on a
#                representative slice, tests/cli/gt/gt_common.sh gt_premerge_small);
#   build-fuzz/  ci/fuzz.sh FUZZ_SECONDS (default 300) per libFuzzer target, then its CTest
#                checks (ci/test.sh gives each target 15 s).
# Prints each stage's wall time at the end. Exit: 0 when every step passed, else the first
# failing step's exit code; 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: ci/nightly-cpu.sh [FUZZ_SECONDS]" >&2; exit 2; }
ci/setup.sh clang libclang-rt-14-dev llvm
jobs=$(nproc)
t0=$SECONDS

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
A4W4_GT_FULL=1 ctest --test-dir build --output-on-failure -j"$jobs" -L wholeset
t_gt=$((SECONDS - t0))

A4W4_FUZZ_COVERAGE=0 ci/fuzz.sh "$secs"
ctest --test-dir build-fuzz --output-on-failure -L fuzz -j"$jobs"
printf '%6d s  whole-set ground-truth runs\n%6d s  fuzzing, %d s per target\n' \
  "$t_gt" $((SECONDS - t0 - t_gt)) "$secs"
