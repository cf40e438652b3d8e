#!/usr/bin/env bash
# --resume continues the run of one matrix and refuses another (docs/cli/run.md, "Results,
# resume, shards"):
#   1. `run --case a --case a` is the matrix of `run --case a`: the same matrix_hash, and
#      --resume of either continues the other. Reproducer (before the fix): the name was folded
#      into matrix_hash twice, so `run --case a --resume` over `--case a --case a` was refused as
#      another matrix (exit 2); another selection is still another matrix.
#   2. --captures DIR through --resume: the captures' bytes are part of matrix_hash, so a run
#      cut after its first capture resumes and judges the rest, and a capture rewritten under
#      its name is refused (exit 2, one line naming matrix_hash).
. "$(dirname "$0")/common.sh.inc"
export PYTHONPATH="$SRC/python:$SRC/python/tests" PYTHONDONTWRITEBYTECODE=1
small_cases 2 > c.csv
hash_of() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["matrix_hash"])' "$1/results.json"; }
items_of() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"]["recorded_items"])' "$1/results.json"; }
run() { "$CLI" run --cases c.csv --no-golden --backend cpu-fallback --quiet "$@"; }

# 1. a name given twice
run --case a --case a --out twice || fail "--case a --case a: exit $?"
run --case a --out once || fail "--case a: exit $?"
[ "$(hash_of twice)" = "$(hash_of once)" ] ||
  fail "matrix_hash of --case a --case a $(hash_of twice), of --case a $(hash_of once)"
code run --case a --out twice --resume
[ "$rc" = 0 ] || { cat err.txt; fail "--case a --resume over --case a --case a: exit $rc, expected 0"; }
code run --case a --case a --out once --resume
[ "$rc" = 0 ] || { cat err.txt; fail "--case a --case a --resume over --case a: exit $rc, expected 0"; }
[ "$(items_of once)" = 1 ] || fail "--case a --case a: $(items_of once) items, expected 1"
code run --case b --out once --resume
[ "$rc" = 2 ] || { cat err.txt; fail "--case b --resume over --case a: exit $rc, expected 2"; }
grep -q "resume refused: the recorded run differs in 'matrix_hash'" err.txt ||
  { cat err.txt; fail "--case b --resume: the refusal does not name matrix_hash"; }

# 2. --captures through --resume: two captures of exact outputs, and a third to swap in
/usr/bin/python3 - <<'PY' || fail "cannot write the captures"
import os
import numpy as np
from a4w4check import bundle
from a4w4check import safetensors_codec as codec
from helpers import exact_y, random_operands

GEMM = {"call_site": "t.py:1", "layer": "l", "contract": "exact", "layouts": "",
        "bpreshuffle": "False", "alpha": "1.0", "beta": "0.0"}
for d, seed in (("caps/p", 5), ("caps/q", 6), ("other", 7)):
    # scales 125..129: every output in the exact regime, judged (contracts §4.1)
    ops = random_operands(np.random.default_rng(seed), 3, 32, 64, scales=(125, 129))
    os.makedirs(d)
    bundle.save_capture(d, "aiter.gemm_a4w4", (3, 32, 64),
                        dict(ops, y=codec.Raw("BF16", exact_y(ops))), GEMM)
PY
crun() { "$CLI" run --captures caps --quiet "$@"; }
crun --out cw || fail "run --captures: exit $?"
[ "$(items_of cw)" = 2 ] || fail "run --captures: $(items_of cw) items, expected 2"
# the run cut after its first capture: the results file loses its last item line
head -n -1 cw/results.jsonl > t.jsonl && mv t.jsonl cw/results.jsonl
code crun --out cw --resume
[ "$rc" = 0 ] || { cat err.txt; fail "--captures --resume over the same captures: exit $rc, expected 0"; }
[ "$(items_of cw)" = 2 ] || fail "--captures --resume: $(items_of cw) items, expected 2"
q=$(ls caps/q/*.safetensors)
cp other/*.safetensors "$q"   # the same name, other bytes
code crun --out cw --resume
[ "$rc" = 2 ] || { cat err.txt; fail "--resume after a capture was rewritten: exit $rc, expected 2"; }
grep -q "resume refused: the recorded run differs in 'matrix_hash'" err.txt ||
  { cat err.txt; fail "--captures --resume: the refusal does not name matrix_hash"; }
[ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "--captures --resume: more than one line"; }
echo "a --case given twice is one selection; --captures resume and are bound to their bytes"
