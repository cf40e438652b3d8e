#!/usr/bin/env bash
# In a coverage build, gcov counters are in the code gcovr reports and nowhere else: every
# library folder (ref/, reports/, harness/) holds .gcno notes, and tests/ (the unit tests, their
# tools, the plugin fixtures) holds none (the top-level CMakeLists.txt takes --coverage out of
# the compile options after those folders). Usage: check_coverage_scope.sh BUILD_DIR
set -euo pipefail
b=${1:?usage: check_coverage_scope.sh BUILD_DIR}
rc=0
for d in ref reports harness; do
  [ -n "$(find "$b/$d" -name '*.gcno' -print -quit)" ] ||
    { echo "coverage_scope: no gcov notes under $b/$d: the library is not instrumented"; rc=1; }
done
stray=$(find "$b/tests" -name '*.gcno' | sed -n '1,5p')
[ -z "$stray" ] ||
  { echo "coverage_scope: gcov notes in test code (counters gcovr never reads):"; echo "$stray"; rc=1; }
[ "$rc" = 0 ] && echo "coverage_scope: counters in ref/, reports/, harness/ only"
exit "$rc"
