#!/usr/bin/env bash
# discover's progress on a stderr that is no terminal (a log, a pipe) is whole lines, each
# ending in a newline, no carriage return (before: "\r...round 1: 16/21 calls\r...21/21 calls"
# ran into one line of a log).
. "$(dirname "$0")/common.sh.inc"
code "$CLI" discover --backend cpu-fallback --shapes 4x32x256 --out f.contract
[ "$rc" = 0 ] || { cat err.txt; fail "discover: exit $rc"; }
if grep -q $'\r' err.txt; then fail "a carriage return in stderr that is no terminal"; fi
n=$(grep -c '^a4w4check discover: round [0-9]*: [0-9]*/[0-9]* calls$' err.txt)
[ "$n" -ge 2 ] || { cat err.txt; fail "$n whole progress lines, want one per round at least"; }
grep -q '^a4w4check discover: round 1: \([0-9]*\)/\1 calls$' err.txt || fail "round 1 has no end line"
echo "discover progress: $n whole lines"
