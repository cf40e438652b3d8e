#!/usr/bin/env bash
# The test command's stages (ci/test.sh), run in a scratch copy with every tool it calls
# replaced by a stub that logs its call and its nice value (cmake, ctest, gcovr, nvcc,
# ci/setup.sh, ci/fuzz.sh, the NVIDIA build's a4w4check): seconds, no build.
#   - all green: exit 0, every stage's time printed; the fuzz and GPU builds ran niced,
#     every test run at nice 0; the optimized build's ctest runs with `-LE plumbing`; the one
#     instrumented build has both gcov and the sanitizers, and its ctest runs under the sanitizer
#     options with `-LE "heavy|source"`; gcovr reads that build; the AMD GPU build's ctest runs
#     every gpu test, the NVIDIA one's all but the host-code ones (`-LE gpu-host`); build/ and
#     the GPU builds compile through ccache, the others not, and the GPU builds are configured
#     after build/ is built;
#   - one stage forced red at a time (setup, its ctest, gcovr, a background build, fuzzing): the
#     command exits non-zero and its last line names that stage; a red first stage stops the
#     background builds (none finishes after the command has ended).
. "$(dirname "$0")/common.sh.inc"
: "$CLI" "$P"
mkdir -p repo/ci bin
cp "$SRC/ci/test.sh" repo/ci/test.sh
# the stubs: log "tool nice=N args", fail when the call matches $STUB_FAIL (a glob). Each is
# one bash process and no other (the nice value read from /proc, as nice(1) would print it):
# ci/test.sh runs ten times here, some 20 stub calls each.
echo "#!$(command -v bash)" > bin/stub
cat >> bin/stub <<'EOF'
tool=${0##*/} call="${0##*/} $*"
san="${UBSAN_OPTIONS:+UBSAN=$UBSAN_OPTIONS }${ASAN_OPTIONS:+ASAN=$ASAN_OPTIONS }"
read -r stat < "/proc/$BASHPID/stat"
read -r -a field <<< "${stat##*) }"  # field[16]: the nice value (proc(5), field 19)
echo "$tool nice=${field[16]} $san$*" >> "$STUB_LOG"
# shellcheck disable=SC2053
[ -n "${STUB_FAIL:-}" ] && [[ "$call" == $STUB_FAIL ]] && { echo "$tool: forced failure"; exit 9; }
[[ "$call" =~ ^cmake\ -S\ \.\ -B\ ([^ ]*) ]] && mkdir -p "${BASH_REMATCH[1]}"
if [[ "$call" == "cmake --build build-gpu-nvidia"* ]]; then
  sleep "${STUB_GPU_SECONDS:-0}"
  printf '#!/bin/sh\necho "a4w4check: no GPU (stub)" >&2\nexit 3\n' > build-gpu-nvidia/a4w4check
  chmod +x build-gpu-nvidia/a4w4check
  touch build-gpu-nvidia/built
fi
exit 0
EOF
chmod +x bin/stub
for t in cmake ctest gcovr nvcc ccache; do ln -s stub "bin/$t"; done
ln -s ../../bin/stub repo/ci/fuzz.sh
ln -s ../../bin/stub repo/ci/setup.sh
# the background builds at nice 3, not 19: on a loaded machine a stub at 19 waits for long
export PATH="$WORK/bin:$PATH" STUB_LOG="$WORK/calls.log" A4W4_CI_NICE=3
unset UBSAN_OPTIONS ASAN_OPTIONS

# run_ci FAIL-GLOB: ci/test.sh with that call failing; its output in ci.out, exit code in rc
run_ci() {
  : > "$STUB_LOG"
  set +e; STUB_FAIL=$1 bash repo/ci/test.sh > ci.out 2>&1; rc=$?; set -e
}
calls() { grep -c -F -- "$1" "$STUB_LOG" || :; }

# all green
run_ci ""
[ "$rc" = 0 ] || { cat ci.out; fail "all stubs green: exit $rc"; }
grep -q '^ *[0-9]* s  in all$' ci.out || { cat ci.out; fail "no total time"; }
for s in "setup (ci/setup.sh)" "optimized build + tests (build/)" \
  "coverage + sanitizer build + tests (build-cov-asan/)" "line coverage (gcovr, build-cov-asan/)" \
  "fuzzing, 15 s per target" "GPU code, NVIDIA platform" "GPU code, AMD platform"; do
  grep -q "^ *[0-9]* s  $s" ci.out || { cat ci.out; fail "no time line for stage '$s'"; }
done
for b in "cmake --build build-fuzz" "cmake --build build-gpu-nvidia" \
  "cmake --build build-gpu-amd"; do
  [ "$(grep -c -F -- "${b/cmake /cmake nice=3 }" "$STUB_LOG")" = 1 ] ||
    { cat "$STUB_LOG"; fail "'$b' did not run once at A4W4_CI_NICE"; }
done
! grep -E '^(ctest|gcovr|fuzz.sh) nice=[1-9]' "$STUB_LOG" || fail "a test run was niced"
# ccache for build/ and the GPU builds, which share its host objects, and only for them; the
# GPU builds configured only once build/ is built (ci/test.sh: they take its objects)
for b in "build " "build-gpu-nvidia " "build-gpu-amd "; do
  grep -q -- "-B $b.*-DCMAKE_C_COMPILER_LAUNCHER=ccache" "$STUB_LOG" ||
    { cat "$STUB_LOG"; fail "the configure of $b does not use ccache"; }
done
! grep -E -- '-B build-(cov-asan|fuzz) .*LAUNCHER' "$STUB_LOG" ||
  { cat "$STUB_LOG"; fail "the instrumented or fuzz build uses the cache (other flags: no hit)"; }
built=$(grep -n -F -- 'cmake nice=0 --build build -j' "$STUB_LOG" | cut -d: -f1)
for b in build-gpu-nvidia build-gpu-amd; do
  conf=$(grep -n -F -- "-B $b " "$STUB_LOG" | cut -d: -f1)
  [ -n "$built" ] && [ -n "$conf" ] && [ "$conf" -gt "$built" ] ||
    { cat "$STUB_LOG"; fail "$b configured before build/ was built"; }
done
grep -q -- '-DA4W4_COVERAGE=ON -DA4W4_SANITIZE=ON' "$STUB_LOG" ||
  { cat "$STUB_LOG"; fail "no build with both gcov and the sanitizers"; }
san='UBSAN=[^ ]*exitcode=86 ASAN=[^ ]*exitcode=87'
grep -q "^ctest nice=0 $san --test-dir build-cov-asan .*-LE heavy|source\$" "$STUB_LOG" ||
  { cat "$STUB_LOG"; fail "build-cov-asan's ctest: not under the sanitizer options, or not every test but the heavy and source-tree ones"; }
[ "$(calls 'ctest nice=0 --test-dir build ')" = 1 ] ||
  fail "the optimized build's ctest did not run once"
# the optimized build leaves the CLI's plumbing to the instrumented one (tests/CMakeLists.txt)
# build/ may be the main job's (ci/premerge.sh: BUILD_TESTING=OFF): configured with the tests
# again, and a ctest finding none fails
grep -q -- '^cmake nice=0 -S \. -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON' "$STUB_LOG" ||
  { cat "$STUB_LOG"; fail "build/ is not configured with BUILD_TESTING=ON"; }
grep -q '^ctest nice=0 --test-dir build --output-on-failure --no-tests=error ' "$STUB_LOG" ||
  { cat "$STUB_LOG"; fail "the optimized build's ctest passes on no tests"; }
grep -q '^ctest nice=0 --test-dir build .*-LE plumbing$' "$STUB_LOG" ||
  { cat "$STUB_LOG"; fail "the optimized build's ctest: not every test but the plumbing ones"; }
grep -q '^gcovr .*--object-directory build-cov-asan' "$STUB_LOG" ||
  fail "gcovr does not read build-cov-asan"
grep -q 'no GPU here, as expected (exit 3)' ci.out || fail "the NVIDIA no-GPU check did not run"
# the GPU builds' CPU-side tests: all of them on AMD, all but the host-code ones (label
# gpu-host, the same checks) on NVIDIA: each runs at least once
grep -q '^ctest nice=0 --test-dir build-gpu-nvidia .*-L gpu -LE gpu-host ' "$STUB_LOG" ||
  { cat "$STUB_LOG"; fail "build-gpu-nvidia's ctest: not every gpu test but the gpu-host ones"; }
amd=$(grep '^ctest nice=0 --test-dir build-gpu-amd ' "$STUB_LOG" || :)
[[ "$amd" == *" -L gpu "* && "$amd" != *" -LE "* ]] ||
  { cat "$STUB_LOG"; fail "build-gpu-amd's ctest: not every gpu test (the gpu-host ones included)"; }

# each stage red in turn: a non-zero exit, the stage named on the last line
while IFS='|' read -r glob stage; do
  run_ci "$glob"
  last=$(tail -n 1 ci.out)
  [ "$rc" != 0 ] || { cat ci.out; fail "'$glob' failed, yet exit 0"; }
  [[ "$last" == "ci/test.sh: STAGE FAILED: $stage"* ]] ||
    { cat ci.out; fail "'$glob' failed: the last line does not name '$stage': $last"; }
done <<'EOF'
setup.sh *|setup (ci/setup.sh)
ctest --test-dir build *|optimized build + tests (build/)
ctest --test-dir build-cov-asan *|coverage + sanitizer build + tests (build-cov-asan/)
gcovr *|line coverage (gcovr, build-cov-asan/)
cmake --build build-fuzz *|fuzzing, 15 s per target
fuzz.sh *|fuzzing, 15 s per target
cmake --build build-gpu-nvidia *|GPU code, NVIDIA platform
ctest --test-dir build-gpu-amd *|GPU code, AMD platform
EOF
grep -q 'forced failure' ci.out || fail "a failing background build's log is not printed"

# a red first stage stops the background builds: the NVIDIA build (3 s here) never finishes
rm -f repo/build-gpu-nvidia/built
STUB_GPU_SECONDS=3 run_ci "ctest --test-dir build *"
[ "$rc" != 0 ] || fail "a red optimized stage: exit 0"
sleep 4
[ ! -e repo/build-gpu-nvidia/built ] ||
  fail "the background NVIDIA build went on after the command ended"
echo "ci stages ok: all green passes, each red stage is named, background builds niced"
