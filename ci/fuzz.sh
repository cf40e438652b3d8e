#!/usr/bin/env bash
# ci/fuzz.sh [SECONDS] — the libFuzzer targets of tests/fuzz, each run for SECONDS (default 60),
#   as many at once as there are cores:
#   configure + build build-fuzz/ with clang (-DA4W4_FUZZ=ON: ASan + UBSan + libFuzzer),
#   run every target on a scratch copy of its seed corpus (tests/fuzz/corpus/<target>) with
#   -max_total_time=SECONDS -timeout=10 -rss_limit_mb=2048 and its dictionary,
#   print per target: executions, exec/s, libFuzzer's final cov / ft, the corpus size, and
#   (build-fuzz-cov/, clang source-based coverage) the line coverage of the target's library
#   files reached by replaying the final corpus.
# Exits 1 when any target crashed, leaked, timed out or ran out of memory, naming the target,
# the crash file (kept under build-fuzz/fuzz-run/artifacts/) and the sanitizer's report.
# Reproduce a crash: build-fuzz/fuzz/fuzz_<target> <crash file>.
# Environment: A4W4_FUZZ_TARGETS (space-separated subset), A4W4_FUZZ_BUILD_DIR (build-fuzz),
#   A4W4_FUZZ_SKIP_BUILD=1 (use the existing build), A4W4_FUZZ_COVERAGE=0 (skip line coverage),
#   A4W4_FUZZ_STRICT=1 (also fail on the known findings, tests/fuzz/fuzz_common.h).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: ci/fuzz.sh [SECONDS]" >&2; exit 2; }
build=${A4W4_FUZZ_BUILD_DIR:-build-fuzz}
read -r -a targets <<<"${A4W4_FUZZ_TARGETS:-safetensors casefile tuned kernels results plugin_info capture bundle_dir}"
jobs=$(nproc)

# Library files each target exercises (globs; line coverage is reported over these).
declare -A lib_files=(
  [safetensors]="harness/io/safetensors.c"
  [casefile]="harness/io/casefile.c"
  [tuned]="ref/a4w4_csv.c ref/a4w4_dispatch*.c harness/io/shapelist.c"
  [kernels]="ref/a4w4_csv.c ref/a4w4_dispatch*.c"
  [results]="reports/results_schema.c reports/a4w4_jsonschema.c reports/markdown.c reports/html.c reports/junit.c reports/compare.c reports/report_common.c"
  [plugin_info]="harness/backends/plugin.c harness/backends/registry.c"
  [capture]="harness/commands/verify_capture.c harness/engine/check.c"
  [bundle_dir]="harness/backends/bundle_dir.c harness/backends/bundle.c"
)
# Largest input per target (libFuzzer's default is the largest seed, at least 4096).
declare -A max_len=([safetensors]=16384 [results]=32768 [capture]=8192 [bundle_dir]=4096)

configure_build() { # DIR [extra cmake args...]
  local dir=$1
  shift
  CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA4W4_FUZZ=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" --target fuzz_all >/dev/null
}

if [ "${A4W4_FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  ci/setup.sh clang libclang-rt-14-dev llvm
  configure_build "$build"
fi

run="$build/fuzz-run"
rm -rf "$run"
mkdir -p "$run/corpus" "$run/artifacts" "$run/logs"
# the path-based targets write each input to a file: keep those in memory (tmpfs), ~5x faster
tmp_base=/dev/shm
[ -d "$tmp_base" ] && [ -w "$tmp_base" ] || tmp_base=${TMPDIR:-/tmp}
A4W4_FUZZ_TMP=$(mktemp -d "$tmp_base/a4w4fuzz-run.XXXXXX")
export A4W4_FUZZ_TMP
trap 'rm -rf "$A4W4_FUZZ_TMP"' EXIT
# every UBSan report with its stack (the build makes each one abort: -fno-sanitize-recover)
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# One target: fuzz, then print its numbers; returns 1 on a crash (the report is printed).
fuzz_one() {
  local t=$1
  local bin="$build/fuzz/fuzz_$t" log="$run/logs/$t.log" corpus="$run/corpus/$t" rc=0
  [ -x "$bin" ] || { echo "ci/fuzz.sh: $bin not built"; return 1; }
  cp -r "tests/fuzz/corpus/$t" "$corpus"
  local args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$run/artifacts/$t-")
  [ -f "tests/fuzz/dict/$t.dict" ] && args+=(-dict="tests/fuzz/dict/$t.dict")
  [ -n "${max_len[$t]:-}" ] && args+=(-max_len="${max_len[$t]}")
  "$bin" "${args[@]}" "$corpus" >"$log" 2>&1 || rc=$?
  local crash
  crash=$(find "$run/artifacts" -name "$t-*" -type f | head -n 1)
  if [ "$rc" != 0 ] || [ -n "$crash" ]; then
    echo "FAIL $t: fuzz_$t exited $rc; crash file: ${crash:-none written} (log: $log)"
    grep -a -E -A 30 -m 1 '^fuzz|ERROR: |runtime error|libFuzzer: ' "$log" | head -n 40 | sed 's/^/    /'
    return 1
  fi
  local execs eps done_line cov ft corp
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$done_line")
  printf '%-12s ok   execs %9s  exec/s %7s  cov %5s  ft %6s  corpus %s\n' "$t" "$execs" "$eps" \
    "$cov" "$ft" "$corp"
}

# Targets run $jobs at a time (each for a fixed wall time, so the stage takes about
# ceil(targets / jobs) * SECONDS); their lines are printed in the targets' order.
failed=()
printf '=== fuzzing %s target(s), %s s each, %s at a time (build: %s) ===\n' "${#targets[@]}" \
  "$secs" "$jobs" "$build"
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  for t in "${batch[@]}"; do
    (fuzz_one "$t" >"$run/logs/$t.summary" 2>&1; echo $? >"$run/logs/$t.rc") &
  done
  wait
  for t in "${batch[@]}"; do
    cat "$run/logs/$t.summary"
    [ "$(cat "$run/logs/$t.rc" 2>/dev/null)" = 0 ] || failed+=("$t")
  done
done

# Line coverage of target t's library files, from its final corpus (clang profiles); 1 when
# it cannot be measured.
coverage_one() {
  local t=$1 files
  local prof="$run/logs/$t.profraw"
  LLVM_PROFILE_FILE="$prof" "$cov_build/fuzz/fuzz_$t" -runs=0 "$run/corpus/$t" \
    >"$run/logs/$t.replay.log" 2>&1 || return 1
  llvm-profdata merge -sparse "$prof" -o "$run/logs/$t.profdata" || return 1
  # shellcheck disable=SC2086,SC2116 # the globs expand here
  files=$(echo ${lib_files[$t]})
  # shellcheck disable=SC2086
  llvm-cov report "$cov_build/fuzz/fuzz_$t" -instr-profile="$run/logs/$t.profdata" $files |
    awk -v t="$t" -v files="$files" \
      '$1 == "TOTAL" { printf "%-12s lines %s of %s covered (%s)  [%s]\n", t, $8 - $9, $8, $10, files }'
}

if [ "${A4W4_FUZZ_COVERAGE:-1}" = 1 ]; then
  cov_build="$build-cov"
  echo "=== line coverage of the final corpora ($cov_build) ==="
  if configure_build "$cov_build" -DA4W4_FUZZ_COVERAGE=ON; then
    for t in "${targets[@]}"; do
      coverage_one "$t" || echo "$t: line coverage not measured (see $run/logs/$t.replay.log)"
    done
  else
    echo "ci/fuzz.sh: the coverage build failed; no line coverage"
  fi
fi

if ((${#failed[@]})); then
  echo "ci/fuzz.sh: FAILED: ${failed[*]} (crash files under $run/artifacts)"
  exit 1
fi
echo "ci/fuzz.sh: all ${#targets[@]} targets ran ${secs} s without a crash"
