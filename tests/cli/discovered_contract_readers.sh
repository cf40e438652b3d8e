#!/usr/bin/env bash
# Every reader of contracts takes the file `a4w4check discover --out FILE` writes (a
# "# discovered by ..." comment line, then the contract; contracts §4.2 "The file form"):
# `run --contract B=FILE`, a bundle's contract.txt, `python -m a4w4check.external --contract
# FILE`, `capture(contracts={op: FILE})` and `verify` of those captures. Reproducer: the
# Python side copied the file verbatim, so `run` refused the bundle (exit 2, "contract.txt
# ... is not one contract line") and `verify` failed a correct kernel's capture ("a control
# byte"); a contract.txt holding discover's file was refused the same way.
. "$(dirname "$0")/common.sh.inc"
export PYTHONPATH="$SRC/python:$SRC/python/tests/fake_aiter:$SRC/python/tests:$SRC/tests/cli/capture:$WORK" \
  PYTHONDONTWRITEBYTECODE=1
REF="plugin:$P/liba4w4_ref_plugin.so"

"$CLI" discover --backend "$REF" --out found.txt --shapes 32x32x512 --repeats 2 --no-isolate \
  --quiet --no-evidence > /dev/null || fail "discover exit $?"
[ "$(head -c 15 found.txt)" = "# discovered by" ] && [ "$(grep -v '^#' found.txt)" = "ordered(1)" ] ||
  fail "discover wrote $(cat found.txt)"
small_cases 2 > c.csv

# run --contract B=FILE
code "$CLI" run --cases c.csv --no-golden --quiet --out r1 --backend "$REF" --contract "$REF=found.txt"
[ "$rc" = 0 ] || { cat err.txt; fail "run --contract B=found.txt: exit $rc"; }

# python -m a4w4check.external --contract FILE, then the bundle it wrote
"$CLI" export --cases c.csv --no-golden --out ops --quiet > /dev/null || fail "export exit $?"
cat > kern.py <<'PY'
from make_captures import ordered1
def gemm(a_fp4, w_fp4, a_scale, w_scale, **rest):
    return ordered1(a_fp4, w_fp4, a_scale, w_scale)
PY
code /usr/bin/python3 -m a4w4check.external --ops ops --out ext --kernel kern:gemm \
  --contract found.txt
[ "$rc" = 0 ] || { cat err.txt; fail "external --contract found.txt: exit $rc"; }
[ "$(cat ext/contract.txt)" = "ordered(1)" ] || fail "external wrote contract.txt $(cat ext/contract.txt)"
code "$CLI" run --cases c.csv --no-golden --quiet --out r2 --backend bundle:ext
[ "$rc" = 0 ] || { cat err.txt; fail "run --backend bundle:ext: exit $rc"; }

# discover's file itself as a bundle's contract.txt
cp found.txt ext/contract.txt
code "$CLI" run --cases c.csv --no-golden --quiet --out r3 --backend bundle:ext
[ "$rc" = 0 ] || { cat err.txt; fail "contract.txt holding discover's file: exit $rc"; }

# capture(contracts={op: FILE}), then verify
"$CLI" export --cases c.csv --no-golden --with-expected --out wops --quiet > /dev/null
cp wops/a.safetensors wops/wide.safetensors && cp wops/b.safetensors wops/exact.safetensors
A4W4_TEST_CONTRACT_FILE=$WORK/found.txt /usr/bin/python3 "$SRC/tests/cli/capture/make_captures.py" \
  wops caps user || fail "make_captures exit $?"
code "$CLI" verify caps/user.safetensors
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "verify of the capture judged by found.txt: exit $rc"; }
grep -q '^PASS user.safetensors .*: ordered(1), ' out.txt || fail "verify: $(cat out.txt)"
echo "discovered contract readers: run, bundle contract.txt, external, capture and verify take it"
