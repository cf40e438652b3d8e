#!/usr/bin/env bash
# check_fuzz_script.sh SRC BUILD — ci/fuzz.sh on an existing fuzz build (BUILD, made with
# -DA4W4_FUZZ=ON): a clean 2-second run of one target exits 0 and prints its numbers; with a
# planted crash (A4W4_FUZZ_PLANT_CRASH) it exits 1 naming the target and a crash file that
# exists and reproduces the crash.
set -u
src=${1:?usage: check_fuzz_script.sh SRC BUILD}
build=${2:?usage: check_fuzz_script.sh SRC BUILD}
export A4W4_FUZZ_SKIP_BUILD=1 A4W4_FUZZ_BUILD_DIR=$build A4W4_FUZZ_TARGETS=casefile A4W4_FUZZ_COVERAGE=0
fail() { echo "check_fuzz_script: $*"; exit 1; }

out=$(bash "$src/ci/fuzz.sh" 2 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "a clean run exited $rc"
grep -Eq '^casefile +ok +execs +[0-9]+ +exec/s +[0-9]+ +cov +[0-9]+ +ft +[0-9]+' <<<"$out" ||
  fail "a clean run did not print execs / cov / ft"

out=$(A4W4_FUZZ_PLANT_CRASH=1 bash "$src/ci/fuzz.sh" 2 2>&1)
rc=$?
echo "$out"
[ "$rc" = 1 ] || fail "a planted crash exited $rc, not 1"
crash=$(sed -n 's/^FAIL casefile: .*crash file: \([^ ]*\) .*/\1/p' <<<"$out")
if [ -z "$crash" ] || [ ! -f "$crash" ]; then fail "no crash file named for casefile"; fi
grep -q 'planted crash' <<<"$out" || fail "the crash report is not shown"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
A4W4_FUZZ_TMP=$scratch A4W4_FUZZ_PLANT_CRASH=1 "$build/fuzz/fuzz_casefile" "$crash" >/dev/null 2>&1 &&
  fail "the crash file does not reproduce the crash"
echo "check_fuzz_script: ci/fuzz.sh passes a clean run and fails a crashing one"
