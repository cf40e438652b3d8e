# Sourced by tests/cli/*.sh (not a test itself: tests/CMakeLists.txt registers tests/cli/*.sh
# only): expect CODE CMD... runs CMD with its stdout and stderr in out.txt and calls the
# caller's fail() unless it exits CODE.
expect() {
  local want=$1; shift
  set +e; "$@" > out.txt 2>&1; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat out.txt; fail "exit $rc, expected $want: $*"; }
}
