#!/usr/bin/env bash
# Every test: set up, then build and run the CTest suite two ways —
#   build/       optimized (the CLI other tools call stays at build/a4w4check): every test
#                but the CLI's plumbing (`ctest -LE plumbing`), the heavy ones (label heavy:
#                whole-set runs) included; the ground-truth pre-merge runs (label wholeset)
#                judge a slice here, the whole set in ci/nightly-cpu.sh,
#   build-cov-asan/  one -O1 build with both gcov instrumentation and
#                -fsanitize=address,undefined: `ctest -LE "heavy|source"` once under the
#                sanitizers (the plumbing tests included; the source-tree checks ran in
#                build/), then gcovr line coverage of ref/, harness/, reports/ from the same
#                run; the unit tests' long sweeps take every 4th point there
#                (A4W4_TEST_REDUCED, tests/test_util.h); the labels: tests/CMakeLists.txt;
# then fuzz the readers of untrusted input (A4W4_SKIP_FUZZ=1 skips it):
#   build-fuzz/  clang + libFuzzer: ci/fuzz.sh 15 (every target of tests/fuzz, 15 s each, as
#                many at once as there are cores; A4W4_FUZZ_SECONDS sets it, ci/nightly-cpu.sh
#                runs 300), then its CTest checks (label fuzz: corpus replays, the script's
#                crash test);
# then compile the GPU code for both platforms (no GPU needed: the CLI and the GPU programs
# only, target a4w4_gpu_tests) and run its CPU-side tests (those of host code, label gpu-host,
# on the AMD platform only):
#   build-gpu-nvidia/  nvcc (CUDA 13), sm_90, through gpu/a4w4_hip_port.h,
#   build-gpu-amd/     Debian's hipcc for gfx90a;gfx940 (its clang 15 knows no gfx942/gfx950).
# The builds of build-fuzz/ and the two GPU platforms need nothing from the test stages: they
# run in the background at the lowest CPU priority (nice 19), so that they take the cores the
# test stages leave idle (serial links, tests that wait) and never slow a test; the fuzz build
# starts at once, the GPU builds once build/ is built (with ccache they take its host objects,
# below); the fuzzing runs and the GPU stages' tests wait for them and run in the foreground.
# Prints each stage's wall time at the end. A failing stage ends the command, exit 1 or the
# failing step's code, with a last line naming the stage (ci/test.sh: STAGE FAILED: ...).
# A4W4_SKIP_FUZZ=1 and A4W4_SKIP_GPU_BUILD=1 skip those stages; A4W4_CI_NICE sets the
# background builds' nice value (default 19).
set -euo pipefail
cd "$(dirname "$0")/.."
# every stage's packages in one apt-get update + install (one per stage cost two more updates
# and installs on a fresh machine): the fuzz stage's clang, the AMD GPU stage's hipcc
extra=()
[ "${A4W4_SKIP_FUZZ:-0}" = 1 ] || extra+=(clang libclang-rt-14-dev llvm)
[ "${A4W4_SKIP_GPU_BUILD:-0}" = 1 ] || extra+=(hipcc libamdhip64-dev rocm-device-libs ccache)
# The background builds (started below, before the first stage): name -> pid.
declare -A bg_pid=()
name_step="setup (ci/setup.sh)"
background() { # NAME LOG FUNCTION: run FUNCTION niced into LOG, in its own process group
  local name=$1 log=$2
  shift 2
  mkdir -p "$(dirname "$log")"
  set -m
  (renice -n "${A4W4_CI_NICE:-19}" "$BASHPID" >/dev/null; "$@") > "$log" 2>&1 &
  bg_pid[$name]=$!
  set +m
}
background_wait() { # NAME LOG: wait for it, print its log; a failed build fails the stage
  local rc=0
  wait "${bg_pid[$1]}" || rc=$?
  unset "bg_pid[$1]"
  cat "$2"
  [ "$rc" -eq 0 ] || { echo "ci/test.sh: $1 (log above, $2): exit $rc"; exit "$rc"; }
}
# Any failure ends the command here: stop the background builds, name the stage.
finish() {
  local rc=$?
  local pid
  for pid in "${bg_pid[@]}"; do kill -- -"$pid" 2>/dev/null || :; done
  wait 2>/dev/null || :
  [ "$rc" -eq 0 ] || echo "ci/test.sh: STAGE FAILED: $name_step (exit $rc)"
  exit "$rc"
}
trap finish EXIT

t_all=$SECONDS t_step=$SECONDS times=""
ci/setup.sh ${extra[@]+"${extra[@]}"}
jobs=$(nproc)
# ccache (Debian's) for the C compiles of build/ and of the two GPU builds: those compile the
# same host C sources (ref/, harness/, reports/, the GPU tests' host code) with the same flags
# as build/ (178 of each GPU build's 197 objects), so, started after build/, they take them
# from the cache instead of compiling them twice more. The cache is the checkout's own
# (build-ccache/) unless CCACHE_DIR is set; paths under the checkout hash relative
# (CCACHE_BASEDIR) and the build directory is left out of the hash (CCACHE_NOHASHDIR: a cached
# object's debug info names the directory of the compile that filled it). The instrumented and
# fuzz builds use other flags and no cache.
launcher=()
if [ "${A4W4_SKIP_GPU_BUILD:-0}" != 1 ] && command -v ccache > /dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$PWD/build-ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

step() { # close the previous stage's clock, open the next
  times+=$(printf '%6d s  %s' $((SECONDS - t_step)) "$name_step")$'\n'
  name_step=$*
  t_step=$SECONDS
  printf '\n=== %s ===\n' "$*"
}

# The background builds: the fuzz targets (clang), the two GPU platforms.
gpu_nvidia_build() (
  set -euo pipefail
  cmake -S . -B build-gpu-nvidia -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA4W4_GPU=nvidia \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 ${launcher[@]+"${launcher[@]}"} \
    >/dev/null
  cmake --build build-gpu-nvidia -j"$jobs" --target a4w4check a4w4_gpu_tests
)
gpu_nvidia_test() (
  set -euo pipefail
  # no GPU here: the gpu-labelled test skips (exit 77); the emulation tests run; the tests of
  # host code (label gpu-host: the CLI's device path on the stand-ins, the checkers' fault
  # tests) run in the AMD build only, where they check the same thing (tests/gpu/CMakeLists.txt)
  ctest --test-dir build-gpu-nvidia --output-on-failure -L gpu -LE gpu-host -j"$jobs"
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
gpu_amd_build() (
  set -euo pipefail
  # hipcc asks rocm_agent_enumerator for the GPU when a compile names no --offload-arch
  # (CMake's compiler check does): without /sys/class/kfd that prints a Python traceback,
  # harmless but alarming. Name the targets instead.
  export HCC_AMDGPU_TARGET="gfx90a,gfx940"
  CXX=hipcc cmake -S . -B build-gpu-amd -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA4W4_GPU=amd \
    -DGPU_TARGETS="gfx90a;gfx940" -DAMDGPU_TARGETS="gfx90a;gfx940" \
    ${launcher[@]+"${launcher[@]}"} >/dev/null
  cmake --build build-gpu-amd -j"$jobs" --target a4w4check a4w4_gpu_tests
)
fuzz_build() {
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA4W4_FUZZ=ON >/dev/null
  cmake --build build-fuzz -j"$jobs" --target fuzz_all
}
if [ "${A4W4_SKIP_GPU_BUILD:-0}" != 1 ]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [ -x "$nvcc" ] || { echo "ci/test.sh: nvcc not found (expected on PATH or /usr/local/cuda/bin)"; exit 1; }
fi
[ "${A4W4_SKIP_FUZZ:-0}" = 1 ] || background fuzz_build build-fuzz/build.log fuzz_build

step "optimized build + tests (build/)"
# BUILD_TESTING stated: build/ may come from the main job (ci/premerge.sh), configured without
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON \
  ${launcher[@]+"${launcher[@]}"} >/dev/null
cmake --build build -j"$jobs"
# the GPU builds start once build/ has filled the cache with the host objects they share
if [ "${A4W4_SKIP_GPU_BUILD:-0}" != 1 ]; then
  background gpu_nvidia_build build-gpu-nvidia/build.log gpu_nvidia_build
  background gpu_amd_build build-gpu-amd/build.log gpu_amd_build
fi
ctest --test-dir build --output-on-failure --no-tests=error -j"$jobs" -LE plumbing

step "coverage + sanitizer build + tests (build-cov-asan/)"
cmake -S . -B build-cov-asan -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=ON -DA4W4_COVERAGE=ON \
  -DA4W4_SANITIZE=ON >/dev/null
find build-cov-asan -name '*.gcda' -delete
cmake --build build-cov-asan -j"$jobs"
# A sanitizer report must never pass for a test's expected exit code: UBSan exits 86, ASan
# and LeakSanitizer 87 (not 1, "mismatch", which many CLI tests expect; not abort_on_error's
# 134 either), and every CLI test checks the exact code it expects
# (tests/cli/sanitizer_exit_codes.sh holds these options to that).
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=87
ctest --test-dir build-cov-asan --output-on-failure --no-tests=error -j"$jobs" -LE "heavy|source"
unset UBSAN_OPTIONS ASAN_OPTIONS
step "line coverage (gcovr, build-cov-asan/)"
gcovr -j "$jobs" -r . --gcov-ignore-parse-errors --object-directory build-cov-asan \
  --filter 'ref/' --filter 'harness/' --filter 'reports/' --print-summary \
  | tail -n 40

if [ "${A4W4_SKIP_FUZZ:-0}" != 1 ]; then
  fuzz_secs=${A4W4_FUZZ_SECONDS:-15}
  step "fuzzing, $fuzz_secs s per target (build-fuzz/, ci/fuzz.sh)"
  background_wait fuzz_build build-fuzz/build.log
  A4W4_FUZZ_SKIP_BUILD=1 A4W4_FUZZ_COVERAGE=0 ci/fuzz.sh "$fuzz_secs" || {
    echo "ci/test.sh: FUZZING FAILED: a target crashed, leaked, hung or broke an invariant;" \
      "the crash file and the sanitizer report are above (reproduce:" \
      "build-fuzz/fuzz/fuzz_<target> <crash file>; tests/fuzz/README.md)"
    exit 1
  }
  ctest --test-dir build-fuzz --output-on-failure -L fuzz -j"$jobs"
fi

if [ "${A4W4_SKIP_GPU_BUILD:-0}" != 1 ]; then
  step "GPU code, NVIDIA platform: nvcc build + CPU-side GPU tests (build-gpu-nvidia/)"
  background_wait gpu_nvidia_build build-gpu-nvidia/build.log
  gpu_nvidia_test
  step "GPU code, AMD platform: hipcc build for gfx90a;gfx940 + CPU-side GPU tests (build-gpu-amd/)"
  background_wait gpu_amd_build build-gpu-amd/build.log
  ctest --test-dir build-gpu-amd --output-on-failure -L gpu -j"$jobs"
fi

step "all test stages passed"
printf '%s%6d s  in all\n' "$times" $((SECONDS - t_all))
