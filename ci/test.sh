#!/usr/bin/env bash
# Every test: set up, then build and run the CTest suite three ways —
#   build/       optimized (the CLI other tools call stays at build/a4w4check): every test,
#                the heavy ones (label heavy: whole-set runs) included; the ground-truth
#                pre-merge runs (label wholeset) judge a slice here, the whole set in
#                ci/nightly-cpu.sh,
#   build-cov/   with gcov instrumentation (-O0), `ctest -LE heavy`, then gcovr line coverage
#                of ref/, harness/, reports/,
#   build-asan/  with -fsanitize=address,undefined (-O1), `ctest -LE heavy`;
# in those two builds the unit tests' long sweeps take every 4th point (A4W4_TEST_REDUCED,
# tests/test_util.h); then fuzz the readers of untrusted input (A4W4_SKIP_FUZZ=1 skips it):
#   build-fuzz/  clang + libFuzzer: ci/fuzz.sh 15 (every target of tests/fuzz, 15 s each, as
#                many at once as there are cores; A4W4_FUZZ_SECONDS sets it, ci/nightly-cpu.sh
#                runs 300), then its CTest checks (label fuzz: corpus replays, the script's
#                crash test);
# then compile the GPU code for both platforms, side by side (no GPU needed: the CLI and the
# GPU programs only, target a4w4_gpu_tests) and run its CPU-side tests:
#   build-gpu-nvidia/  nvcc (CUDA 13), sm_90, through gpu/a4w4_hip_port.h,
#   build-gpu-amd/     Debian's hipcc for gfx90a;gfx940 (its clang 15 knows no gfx942/gfx950).
# Prints each stage's wall time at the end. Fails loudly on the first failing step.
# A4W4_SKIP_GPU_BUILD=1 skips the GPU stages.
set -euo pipefail
cd "$(dirname "$0")/.."
# every stage's packages in one apt-get update + install (one per stage cost two more updates
# and installs on a fresh machine): the fuzz stage's clang, the AMD GPU stage's hipcc
extra=()
[ "${A4W4_SKIP_FUZZ:-0}" = 1 ] || extra+=(clang libclang-rt-14-dev llvm)
[ "${A4W4_SKIP_GPU_BUILD:-0}" = 1 ] || extra+=(hipcc libamdhip64-dev rocm-device-libs)
ci/setup.sh ${extra[@]+"${extra[@]}"}
jobs=$(nproc)

t_all=$SECONDS t_step=$SECONDS name_step="" times=""
step() { # close the previous stage's clock, open the next
  [ -n "$name_step" ] && times+=$(printf '%6d s  %s' $((SECONDS - t_step)) "$name_step")$'\n'
  name_step=$*
  t_step=$SECONDS
  printf '\n=== %s ===\n' "$*"
}

# The GPU stages (run side by side below; each fails on its first failing step).
gpu_nvidia() (
  set -euo pipefail
  cmake -S . -B build-gpu-nvidia -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA4W4_GPU=nvidia \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build build-gpu-nvidia -j"$gpu_jobs" --target a4w4check a4w4_gpu_tests
  # no GPU here: the gpu-labelled test skips (exit 77); the emulation tests run
  ctest --test-dir build-gpu-nvidia --output-on-failure -L gpu -j"$gpu_jobs"
  # asking for a hip backend without a GPU must exit 3 with one line; that line carries the
  # CUDA runtime's reason ("CUDA driver version is insufficient for CUDA runtime version"
  # on a machine with the toolkit but no driver): expected here, not a failure
  local rc=0
  build-gpu-nvidia/a4w4check run --backend hip-fallback --out build-gpu-nvidia/nogpu --quiet \
    2> build-gpu-nvidia/nogpu.err || rc=$?
  [ "$rc" -eq 3 ] ||
    { cat build-gpu-nvidia/nogpu.err; echo "ci/test.sh: a hip backend without a GPU: exit $rc, expected 3"; exit 1; }
  echo "no GPU here, as expected (exit 3): $(cat build-gpu-nvidia/nogpu.err)"
)
gpu_amd() (
  set -euo pipefail
  # hipcc asks rocm_agent_enumerator for the GPU when a compile names no --offload-arch
  # (CMake's compiler check does): without /sys/class/kfd that prints a Python traceback,
  # harmless but alarming. Name the targets instead.
  export HCC_AMDGPU_TARGET="gfx90a,gfx940"
  CXX=hipcc cmake -S . -B build-gpu-amd -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA4W4_GPU=amd \
    -DGPU_TARGETS="gfx90a;gfx940" -DAMDGPU_TARGETS="gfx90a;gfx940" >/dev/null
  cmake --build build-gpu-amd -j"$gpu_jobs" --target a4w4check a4w4_gpu_tests
  ctest --test-dir build-gpu-amd --output-on-failure -L gpu -j"$gpu_jobs"
)

step "optimized build + tests (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

step "coverage build + tests (build-cov/)"
cmake -S . -B build-cov -DCMAKE_BUILD_TYPE=Debug -DA4W4_COVERAGE=ON >/dev/null
find build-cov -name '*.gcda' -delete
cmake --build build-cov -j"$jobs"
ctest --test-dir build-cov --output-on-failure -j"$jobs" -LE heavy
step "line coverage (gcovr)"
gcovr -j "$jobs" -r . --gcov-ignore-parse-errors --object-directory build-cov --filter 'ref/' --filter 'harness/' --filter 'reports/' \
  --print-summary \
  | tail -n 40

step "sanitizer build + tests (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DA4W4_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
# A sanitizer report must never pass for a test's expected exit code: UBSan exits 86, ASan
# and LeakSanitizer 87 (not 1, "mismatch", which many CLI tests expect; not abort_on_error's
# 134 either), and every CLI test checks the exact code it expects
# (tests/cli/sanitizer_exit_codes.sh holds these options to that).
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=87
ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE heavy
unset UBSAN_OPTIONS ASAN_OPTIONS

if [ "${A4W4_SKIP_FUZZ:-0}" != 1 ]; then
  fuzz_secs=${A4W4_FUZZ_SECONDS:-15}
  step "fuzzing, $fuzz_secs s per target (build-fuzz/, ci/fuzz.sh)"
  A4W4_FUZZ_COVERAGE=0 ci/fuzz.sh "$fuzz_secs" || {
    echo "ci/test.sh: FUZZING FAILED: a target crashed, leaked, hung or broke an invariant;" \
      "the crash file and the sanitizer report are above (reproduce:" \
      "build-fuzz/fuzz/fuzz_<target> <crash file>; tests/fuzz/README.md)"
    exit 1
  }
  ctest --test-dir build-fuzz --output-on-failure -L fuzz -j"$jobs"
fi

if [ "${A4W4_SKIP_GPU_BUILD:-0}" != 1 ]; then
  # The two GPU platforms share nothing: built side by side, one core each (their configure
  # steps and link tails are serial), each into its own log, printed whole when both are done;
  # a failing one names its stage and ends the command.
  step "GPU code, NVIDIA and AMD platforms side by side (build-gpu-nvidia/, build-gpu-amd/)"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [ -x "$nvcc" ] || { echo "ci/test.sh: nvcc not found (expected on PATH or /usr/local/cuda/bin)"; exit 1; }
  gpu_jobs=$(( jobs > 2 ? jobs / 2 : 1 ))
  mkdir -p build-gpu-nvidia build-gpu-amd
  gpu_nvidia > build-gpu-nvidia/stage.log 2>&1 & pid_nvidia=$!
  gpu_amd > build-gpu-amd/stage.log 2>&1 & pid_amd=$!
  rc_nvidia=0 rc_amd=0
  wait $pid_nvidia || rc_nvidia=$?
  wait $pid_amd || rc_amd=$?
  printf '\n=== GPU code, NVIDIA platform: nvcc build + CPU-side GPU tests (build-gpu-nvidia/) ===\n'
  cat build-gpu-nvidia/stage.log
  printf '\n=== GPU code, AMD platform: hipcc build for gfx90a;gfx940 (build-gpu-amd/) ===\n'
  cat build-gpu-amd/stage.log
  [ $rc_nvidia -eq 0 ] || { echo "ci/test.sh: GPU STAGE FAILED: NVIDIA platform (build-gpu-nvidia/), exit $rc_nvidia; its log is above"; exit 1; }
  [ $rc_amd -eq 0 ] || { echo "ci/test.sh: GPU STAGE FAILED: AMD platform (build-gpu-amd/), exit $rc_amd; its log is above"; exit 1; }
fi

step "all test stages passed"
printf '%s%6d s  in all\n' "$times" $((SECONDS - t_all))
