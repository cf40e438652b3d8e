#!/usr/bin/env bash
# A truncated bundle inside a run is bad input, said once (exit 2, the file and the rule), and
# no kernel mismatch: no "FAIL golden/... 0 of 0 checked differ" line (before: the oracle's
# entry was printed as a failure beside the bad-input line). The entry's note says "refused".
. "$(dirname "$0")/common.sh.inc"
g=$(ls "$SRC"/cases/golden/*.safetensors | head -1)
head -c 3000 "$g" > t.safetensors
code "$CLI" run --bundle t.safetensors --out o
[ "$rc" = 2 ] || { cat err.txt; fail "truncated bundle: exit $rc, want 2"; }
if grep -q 'FAIL golden/t' err.txt; then cat err.txt; fail "the truncated bundle is printed as a failure"; fi
[ "$(grep -c 't.safetensors: .*past the data section' err.txt)" = 1 ] ||
  { cat err.txt; fail "the bad-input line is not there once"; }
grep -q '"note":[[:space:]]*"refused: bad input: t.safetensors' o/results.json || fail "the entry's note"
echo "truncated bundle: bad input, once"
