#!/usr/bin/env bash
# reproduce.sh BUILD — the open findings of the fuzz targets (findings/README.md), one input
# each (<target>--<finding>.<ext>): each must still break its target under A4W4_FUZZ_STRICT=1
# with the expected report, and must pass without it (what ci/fuzz.sh tolerates, so CI keeps
# failing only on new faults). When a finding no longer reproduces it was fixed: move its
# input to corpus/<target>/regress-<finding>, drop its "Known finding" tolerance from the
# target and its entry here and in README.md. Every input in this directory must have an
# entry (an input nobody checks is a finding forgotten).
set -u
build=${1:?usage: reproduce.sh BUILD}
dir=$(cd "$(dirname "$0")" && pwd)
A4W4_FUZZ_TMP=$(mktemp -d)
export A4W4_FUZZ_TMP
trap 'rm -rf "$A4W4_FUZZ_TMP"' EXIT
bad=0
listed=()

# expect FILE PATTERN [VAR=VALUE...]: the strict run fails printing PATTERN; the plain run passes.
expect() {
  local file=$1 pattern=$2
  shift 2
  listed+=("$file")
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

# The open findings, one `expect FILE PATTERN` line each (none open now: the nine found on
# the first runs are fixed, their inputs are corpus/<target>/regress-*).

for f in "$dir"/*; do
  name=${f##*/}
  case $name in README.md | reproduce.sh) continue ;; esac
  if [[ " ${listed[*]} " != *" $name "* ]]; then
    echo "$name: an input without an expect line here (a fixed finding belongs in corpus/)"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "reproduce.sh: ${#listed[@]} open finding(s), each reproduces"
exit $bad
