#!/usr/bin/env bash
# Every test: set up, then build and run the whole CTest suite three ways —
#   build/       optimized (the CLI other tools call stays at build/a4w4check),
#   build-cov/   with gcov instrumentation, then gcovr line coverage of ref/ and harness/,
#   build-asan/  with -fsanitize=address,undefined.
# Fails loudly on the first failing step.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/setup.sh
jobs=$(nproc)

step() { printf '\n=== %s ===\n' "$*"; }

step "optimized build + tests (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

step "coverage build + tests (build-cov/)"
cmake -S . -B build-cov -DCMAKE_BUILD_TYPE=Debug -DA4W4_COVERAGE=ON >/dev/null
find build-cov -name '*.gcda' -delete
cmake --build build-cov -j"$jobs"
ctest --test-dir build-cov --output-on-failure -j"$jobs"
step "line coverage (gcovr)"
gcovr -r . --object-directory build-cov --filter 'ref/' --filter 'harness/' --print-summary \
  | tail -n 40

step "sanitizer build + tests (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DA4W4_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

step "all test stages passed"
