#!/usr/bin/env bash
# A backend's reading of E8M0 scale code 0 is part of what it declares (contracts §1): the CPU
# systems under test declare 2^-127, a plugin through a4w4_plugin_e8m0_code0(), an output
# bundle through its manifest's "e8m0_code0"; only an undeclared backend is judged under both
# readings (an entry matching one only: ambiguous, INCOMPLETE). `--e8m0-code0` overrides every
# declaration. Case e_code0 of the edge set holds code 0 where the two readings expect other
# bits (the selftest's mut-e8m0-code0 is caught there). Before: cpu-asm and cpu-fallback were
# ambiguous there (INCOMPLETE, exit 5) unless the run stated the reading.
. "$(dirname "$0")/common.sh.inc"
one() { code "$CLI" run --set edge --case e_code0 --no-golden --out "$1" "${@:2}"; }
verdict() { sed -n 's/.*"verdict":[[:space:]]*"\([A-Z]*\)".*/\1/p' "$1/results.json" | head -1; }

# the built-in CPU backends declare 2^-127: PASS without the flag, and the note says why
one cpu --backend cpu-asm,cpu-fallback
[ "$rc" = 0 ] || { cat err.txt; fail "cpu backends on e_code0: exit $rc, want 0"; }
grep -q 'the reading the backend declares' cpu/results.json || fail "cpu: no note naming the declared reading"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["e8m0_code0_declared"]
assert d == {"cpu-asm": "2^-127", "cpu-fallback": "2^-127"}, d' cpu/results.json ||
  fail "cpu: the header records no declared reading"
grep -q 'read as each backend declares (cpu-asm: 2^-127' cpu/summary.md || fail "cpu: summary.md does not say so"

# plugins: each declared reading judged by it; undeclared is ambiguous
for v in "code0ocp 0 PASS" "code0drv 0 PASS" "code0mis 1 FAIL" "ref 5 INCOMPLETE"; do
  set -- $v
  one "p_$1" --backend "plugin:$P/liba4w4_$1_plugin.so"
  [ "$rc" = "$2" ] || { cat err.txt; fail "plugin $1: exit $rc, want $2"; }
  [ "$(verdict "p_$1")" = "$3" ] || fail "plugin $1: verdict $(verdict "p_$1"), want $3"
done
grep -q '"ambiguous":[[:space:]]*1' p_ref/results.json || fail "undeclared plugin: no ambiguous count"
# the signature's code-0 hint only where the other reading explains a mismatch: kept for
# code0mis (reads 2^-126), not offered for a summation-order bug on a code-0 case (the ground
# truth kernel of descending K declared ordered(1), on e_m513: before, "code 0 decoded other
# than 2^-127?" was offered there too)
hint='code 0 decoded other than 2^-127?'
grep -qF "$hint" p_code0mis/results.json || fail "code0mis: the signature lost the code-0 hint"
code "$CLI" run --set edge --case e_m513 --no-golden --out p_desc \
  --backend "plugin:$P/liba4w4_gt_desc_mis_plugin.so"
[ "$rc" = 1 ] || { cat err.txt; fail "gt desc declared ordered(1) on e_m513: exit $rc, want 1"; }
! grep -qF "$hint" p_desc/results.json || fail "an order bug is offered the code-0 hint: $(grep -m1 signature err.txt)"
grep -q 'the backend declares no reading' p_ref/results.json || fail "undeclared plugin: note"
# the run's statement overrides the declaration: code0drv held to 2^-127 fails
one p_over --backend "plugin:$P/liba4w4_code0drv_plugin.so" --e8m0-code0 2^-127
[ "$rc" = 1 ] || fail "--e8m0-code0 2^-127 over a plugin declaring 2^-126: exit $rc, want 1"
# a declaration that is neither reading refuses the plugin (bad input)
one p_bad --backend "plugin:$P/liba4w4_code0bad_plugin.so"
[ "$rc" = 2 ] || fail "plugin declaring 2^-125: exit $rc, want 2"
grep -q 'a4w4_plugin_e8m0_code0() returned .2^-125.' err.txt || { cat err.txt; fail "bad declaration: message"; }

# an output bundle: its manifest's "e8m0_code0", written by the Python runner from the
# kernel's a4w4_e8m0_code0 (examples/python/my_kernel.py declares 2^-127) or --e8m0-code0
{ echo "name,M,N,K,regime,seed,tags"; grep '^e_code0,' "$SRC/cases/edge.csv"; } > c.csv
code "$CLI" export --cases c.csv --no-golden --out ops --quiet
[ "$rc" = 0 ] || { cat err.txt; fail "export: exit $rc"; }
ext() { PYTHONPATH="$SRC/python:$SRC/examples/python" PYTHONDONTWRITEBYTECODE=1 \
  /usr/bin/python3 -m a4w4check.external --ops ops --kernel my_kernel:gemm "$@" > /dev/null; }
ext --out b127 || fail "external (declared 2^-127): exit $?"
grep -q '"e8m0_code0": "2^-127"' b127/manifest.json || fail "b127's manifest declares no reading"
# the same outputs declared 2^-126, and undeclared (python/tests: the runner's --e8m0-code0)
cp -r b127 b126; cp -r b127 bnone; cp -r b127 bbad
/usr/bin/python3 - <<'PY'
import json
for d, r in (("b126", "2^-126"), ("bnone", None), ("bbad", "2^-125")):
    m = json.load(open(f"{d}/manifest.json"))
    m.pop("e8m0_code0")
    if r:
        m["e8m0_code0"] = r
    json.dump(m, open(f"{d}/manifest.json", "w"))
PY
code "$CLI" run --cases c.csv --no-golden --out r_bbad --backend bundle:bbad
[ "$rc" = 2 ] && grep -q '"e8m0_code0" must be "2^-127" or "2^-126"' err.txt ||
  { cat err.txt; fail "a manifest declaring 2^-125: exit $rc, want 2 with the rule"; }
for v in "b127 0 PASS" "b126 1 FAIL" "bnone 5 INCOMPLETE"; do
  set -- $v
  code "$CLI" run --cases c.csv --no-golden --out "r_$1" --backend "bundle:$1"
  [ "$rc" = "$2" ] || { cat err.txt; fail "bundle $1: exit $rc, want $2"; }
  [ "$(verdict "r_$1")" = "$3" ] || fail "bundle $1: verdict $(verdict "r_$1"), want $3"
done
echo "declared readings judged by: cpu, plugins and bundles; undeclared ambiguous"
