#!/usr/bin/env bash
# reproduce.sh BUILD — the open findings of the fuzz targets (findings/README.md), one input
# each (<target>--<finding>.<ext>): each must still break its target under A4W4_FUZZ_STRICT=1
# with the expected report, and must pass without it (what ci/fuzz.sh tolerates, so CI keeps
# failing only on new faults). When a finding no longer reproduces it was fixed: move its
# input to corpus/<target>/regress-<finding>, drop its "Known finding" tolerance from the
# target and its entry here and in README.md.
set -u
build=${1:?usage: reproduce.sh BUILD}
dir=$(cd "$(dirname "$0")" && pwd)
A4W4_FUZZ_TMP=$(mktemp -d)
export A4W4_FUZZ_TMP
trap 'rm -rf "$A4W4_FUZZ_TMP"' EXIT
bad=0

# expect FILE PATTERN [VAR=VALUE...]: the strict run fails printing PATTERN; the plain run passes.
expect() {
  local file=$1 pattern=$2
  shift 2
  local bin="$build/fuzz/fuzz_${file%%--*}" out rc
  out=$(env A4W4_FUZZ_STRICT=1 "$@" "$bin" "$dir/$file" 2>&1)
  rc=$?
  if [ "$rc" = 0 ] || ! grep -aqF -- "$pattern" <<<"$out"; then
    echo "$file: no longer reproduces (exit $rc, expected '$pattern'): fixed? see the header"
    bad=1
  elif ! "$bin" "$dir/$file" >/dev/null 2>&1; then
    echo "$file: fails without A4W4_FUZZ_STRICT: the target's tolerance for it is gone"
    bad=1
  else
    echo "$file: still reproduces"
  fi
}

expect casefile--cr-in-error.csv "the error message is not one line"
expect tuned--files-grown-on-refusal.csv "a refused table changed t"
expect tuned--grid-z-int-overflow.csv "runtime error: signed integer overflow: 1073741824 + 1073741824"
expect kernels--rounds-past-uint-max.csv "is not an any-order winner"
expect kernels--ratio-int-overflow.csv "runtime error: signed integer overflow: 46341 * 65536"
expect results--render-int-cast.json "runtime error: 1e+308 is outside the range of representable values of type 'int'"
expect results--schema-echo.json "the error message is not one line: fuzz.json: schema"
expect plugin_info--contract-echo.bin "the error message is not one line: plugin"
expect plugin_info--init-msg-unterminated.bin "stack-buffer-overflow" A4W4_FUZZ_PLUGIN_ABI_VIOLATIONS=1
exit $bad
