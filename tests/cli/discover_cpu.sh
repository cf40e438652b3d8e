#!/usr/bin/env bash
# `a4w4check discover` on this project's CPU systems under test: cpu-asm and cpu-fallback are
# found ordered(1) (canonical text equal) at two small shapes, with the evidence file; bad
# usage and bad input get one line and exit 2, a hip backend in a build without a GPU exit 3,
# an unwritable --out exit 4 (contracts §4.4). Usage: discover_cpu.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3 TOOLS=$4
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
fail() { echo "discover_cpu: $*"; exit 1; }

for b in cpu-asm cpu-fallback; do
  "$CLI" discover --backend "$b" --shapes 48x32x1024,8x64x512 --out "$b.txt" --quiet --no-evidence > "$b.log" 2>&1 \
    || fail "$b: exit $? ($(cat "$b.log"))"
  got=$("$TOOLS/contract_text" --file "$b.txt")
  [ "$got" = "ordered(1)" ] || fail "$b: discovered $got, expected ordered(1)"
  [ "$(grep -cE 'at (48x32x1024|8x64x512): ordered\(1\) \(' "$b.log")" = 2 ] ||
    fail "$b: not ordered(1) at both shapes: $(cat "$b.log")"
  grep -q "## 48x32x1024" "$b.txt.evidence.md" || fail "$b: evidence lacks the shape"
  grep -q "round = rne" "$b.txt.evidence.md" || fail "$b: evidence lacks the rounding decision"
  grep -q "predicted all" "$b.txt.evidence.md" || fail "$b: evidence lacks the validation"
done

# expect CODE LINE-PATTERN ARGS...: exit CODE and a line matching the pattern, no file written
expect() {
  local code=$1 pat=$2 rc; shift 2
  set +e; "$CLI" discover "$@" > out.log 2>&1; rc=$?; set -e
  [ $rc -eq "$code" ] || fail "discover $*: exit $rc, expected $code: $(cat out.log)"
  grep -q -- "$pat" out.log || fail "discover $*: no line matching '$pat': $(cat out.log)"
  [ ! -e bad.txt ] || fail "discover $*: wrote bad.txt"
}
expect 2 "are required" --shapes 32x8x512
expect 2 "multiple of 32" --backend cpu-asm --shapes 32x8x500 --out bad.txt
expect 2 "MxNxK" --backend cpu-asm --shapes 32x8 --out bad.txt
expect 2 "not a registered backend" --backend nosuch --out bad.txt --quiet --no-evidence
expect 2 "needs --probes" --backend bundle:nowhere --out bad.txt
expect 2 "over --max-probes" --backend cpu-asm --shapes 32x8x512 --max-probes 10 --out bad.txt
help=$("$CLI" run --help) # whole, before grep: grep -q closing early fails the pipe
if ! grep -q "hip-" <<<"$help"; then
  expect 3 "GPU" --backend hip-asm-32x128 --out bad.txt --quiet --no-evidence
fi
set +e; "$CLI" discover --backend cpu-fallback --shapes 8x8x256 --out /proc/nope/c.txt --quiet --no-evidence > out.log 2>&1; rc=$?; set -e
[ $rc -eq 4 ] || fail "unwritable --out: exit $rc, expected 4: $(cat out.log)"
# a directory that exists and takes no file (root's access(W_OK) says yes to /proc): refused
# before probing, not after the whole discovery
set +e; "$CLI" discover --backend cpu-fallback --shapes 8x8x256 --out /proc/c.txt --no-evidence > out.log 2>&1; rc=$?; set -e
[ $rc -eq 4 ] && grep -q "nothing probed" out.log || fail "--out /proc/c.txt: exit $rc, not refused before probing: $(cat out.log)"
echo "discover_cpu: cpu-asm and cpu-fallback are ordered(1); bad input refused"
