#!/usr/bin/env bash
# A backend that refuses its results (outputs of another matrix, harness/backends/bundle.c)
# makes the run bad input, said once: exit 2 and one line however many items it hits, for a
# golden bundle as for a case (harness/engine/runner.c a4w4_run_golden, harness/cli/cmd_run.c).
# Reproducers (before the fix): a bundle directory whose 30 output files carry another
# matrix_hash printed the refusal 30 times, the last with "E8M0 code 0 present: ..." glued to
# it; refused outputs of a golden bundle gave exit 1, not 2.
. "$(dirname "$0")/common.sh.inc"
export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
{ small_cases 3; echo "d,6,64,1024,code0,3034,"; } > c.csv
mkdir golden && cp "$SRC/cases/golden/g1_m1_n256_k512.safetensors" golden/

# outputs DIR NAME:M:N...: output bundles of those items, y all zero, another matrix_hash
outputs() {
  local dir=$1; shift
  mkdir -p "$dir"
  /usr/bin/python3 - "$dir" "$@" <<'PY'
import sys
import numpy as np
from a4w4check import safetensors_codec as codec
d = sys.argv[1]
for spec in sys.argv[2:]:
    name, m, n = spec.split(":")
    meta = {"format": "a4w4-outputs/1", "case": name, "M": m, "N": n,
            "matrix_hash": "0000000000000000"}
    codec.save("%s/%s.safetensors" % (d, name.replace("/", "__")),
               {"y": np.zeros((int(m), int(n)), dtype="<u2")}, meta)
PY
}

# every case refused: one line, naming the first and how many more
outputs all a:4:32 b:8:64 c:2:32 d:6:64
code "$CLI" run --cases c.csv --no-golden --backend cpu-fallback,bundle:all --out r-all --quiet
[ "$rc" = 2 ] || { cat err.txt; fail "refused cases: exit $rc, expected 2"; }
[ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "refused cases: $(wc -l < err.txt) lines, expected 1"; }
grep -q "^a4w4check: run: bundle:all: refused: .*metadata matrix_hash '0000000000000000'.* (and 3 more items refused or bad input: results.json names each)$" err.txt ||
  { cat err.txt; fail "the line does not say what it must"; }
! grep -q "E8M0" err.txt || { cat err.txt; fail "another note glued to the refusal"; }
[ -s r-all/results.json ] || fail "the results already computed were not written"
echo "refused cases: $(cat err.txt)"

# a golden bundle's outputs refused: bad input (2), not a mismatch (1)
outputs golden-only golden/g1_m1_n256_k512:1:256
code "$CLI" run --cases c.csv --golden golden --backend cpu-fallback,bundle:golden-only --out r-g --quiet
[ "$rc" = 2 ] || { cat err.txt; fail "refused golden outputs: exit $rc, expected 2"; }
[ "$(wc -l < err.txt)" = 1 ] && grep -q "golden__g1_m1_n256_k512.safetensors: metadata matrix_hash" err.txt ||
  { cat err.txt; fail "refused golden outputs: the line does not name the file"; }
echo "refusal_once: one line, exit 2, for cases and golden bundles alike"
