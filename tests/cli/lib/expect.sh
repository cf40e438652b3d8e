# Sourced by tests/cli/*.sh after CLI and WORK are set (not a test itself: tests/CMakeLists.txt
# registers tests/cli/*.sh only): starts the test in a fresh WORK, names the droptail test
# plugin (the selftest mutant mut-drop-kblock as a plugin, tests/plugins) as DROP, and
# defines expect CODE CMD..., which runs CMD with its stdout and stderr in out.txt and calls
# the caller's fail() unless it exits CODE.
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$WORK"
DROP=plugin:$(dirname "$CLI")/plugins/liba4w4_droptail_plugin.so
expect() {
  local want=$1; shift
  set +e; "$@" > out.txt 2>&1; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat out.txt; fail "exit $rc, expected $want: $*"; }
}
