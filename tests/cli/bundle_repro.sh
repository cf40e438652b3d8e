#!/usr/bin/env bash
# The repro line a failing bundle:DIR entry prints reruns that entry (before: --case and
# --no-golden changed the matrix hash, and the bundle, made for the whole matrix, was refused:
# "matrix_hash ..., this run's matrix is ..."). Outputs of the edge set (the numpy example
# kernel) with one output planted wrong in e_k96; the printed line, run as printed, fails on
# that case again (exit 1), judged, not refused.
. "$(dirname "$0")/common.sh.inc"
export PYTHONPATH="$SRC/python:$SRC/examples/python" PYTHONDONTWRITEBYTECODE=1
code "$CLI" export --set edge --out ops --quiet
[ "$rc" = 0 ] || { cat err.txt; fail "export: exit $rc"; }
/usr/bin/python3 -m a4w4check.external --ops ops --out outs --kernel my_kernel:gemm > /dev/null ||
  fail "external: exit $?"
/usr/bin/python3 - outs/e_k96.safetensors <<'PY'
import sys
import numpy as np
from a4w4check import safetensors_codec as codec
got = codec.load(sys.argv[1])
t = dict(got.tensors)
y = np.array(t["y"], dtype=np.uint16)
y.flat[0] ^= 0x0100
t["y"] = y
codec.save(sys.argv[1], t, dict(got.metadata))
PY
code "$CLI" run --set edge --backend bundle:outs --out r
[ "$rc" = 1 ] || { cat err.txt; fail "the planted output: exit $rc, want 1"; }
line=$(sed -n 's/^  repro: //p' err.txt | grep -- '--case e_k96 ' | head -1)
[ -n "$line" ] || { cat err.txt; fail "no repro line for e_k96"; }
echo "printed: $line"
code bash -c "\"$CLI\"${line#a4w4check}"
[ "$rc" = 1 ] || { cat err.txt; fail "the printed repro line: exit $rc, want 1 (the same failure)"; }
grep -q 'FAIL e_k96 on bundle:outs' err.txt || { cat err.txt; fail "the rerun does not fail e_k96"; }
if grep -q 'matrix_hash' err.txt; then fail "the rerun refused the bundle"; fi
echo "bundle repro: the printed line reruns the failing entry"
