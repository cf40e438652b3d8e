#!/usr/bin/env bash
# Every reader of contracts takes a file of shape rules (`when PRED,...: CONTRACT`, contracts
# §4.2 "The file form", Mpad the dispatcher's padded-M bucket of §5.1) and judges each shape by
# its own rule: `run --contract B=FILE`, a bundle's contract.txt (as `python -m
# a4w4check.external --contract FILE` writes it), `capture(contracts={op: FILE})` and `verify`.
# A shape no rule covers is not judged (run: INCOMPLETE, exit 5; verify: refused, exit 2), never
# judged by another shape's rule. Reproducer: a bundle's contract.txt or a capture's contract
# of two rules was refused (exit 2, "is not one contract line").
. "$(dirname "$0")/common.sh.inc"
export PYTHONPATH="$SRC/python:$SRC/python/tests/fake_aiter:$SRC/python/tests:$SRC/tests/cli/capture:$WORK" \
  PYTHONDONTWRITEBYTECODE=1
REF="plugin:$P/liba4w4_ref_plugin.so"
# M 4 and 8: Mpad 16; M 40: Mpad 48. The wrong rule truncates the final bf16 rounding: about
# half of the outputs of M 40 differ from ordered(1).
printf 'name,M,N,K,regime,seed,tags\na,4,32,1024,normal,1,\nb,8,32,1024,normal,2,\nbig,40,32,1024,normal,3,\n' > c.csv
printf '# per bucket\nwhen Mpad<=32: ordered(1)\nwhen Mpad>32: ordered(1)\n' > right.txt
printf 'when Mpad<=32: ordered(1)\nwhen Mpad>32 : tree(final=rz)\n' > wrong.txt
printf 'when Mpad<=32: ordered(1)\n' > part.txt
verdict() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1/results.json"; }

# run --contract B=FILE: each rule on its bucket
code "$CLI" run --cases c.csv --no-golden --quiet --out r0 --backend "$REF" --contract "$REF=wrong.txt"
[ "$rc" = 1 ] || fail "run --contract wrong.txt: exit $rc, expected 1 (final=rz on M 40): $(cat err.txt)"

# the bundle written by the external runner with the rules as its contract.txt
"$CLI" export --cases c.csv --no-golden --out ops --quiet > /dev/null || fail "export exit $?"
cat > kern.py <<'PY'
from make_captures import ordered1
def gemm(a_fp4, w_fp4, a_scale, w_scale, **rest):
    return ordered1(a_fp4, w_fp4, a_scale, w_scale)
PY
# one `when` line (a file of one rule) is rules too, not a contract line
code /usr/bin/python3 -m a4w4check.external --ops ops --out ext_part --kernel kern:gemm --contract part.txt
[ "$rc" = 0 ] || { cat err.txt; fail "external --contract part.txt: exit $rc"; }
# the other bundles: the same outputs, their contract (contract.txt, the manifest, every output
# file's metadata) rewritten without re-running the kernel (a Python start costs seconds here)
recontract() { # recontract SRC DST RULEFILE
  [ "$1" = "$2" ] || cp -r "$1" "$2"
  /usr/bin/python3 - "$2" "$3" <<'PY'
import glob, json, struct, sys
d, text = sys.argv[1], "\n".join(l.strip() for l in open(sys.argv[2]) if l.strip() and l[0] != "#")
def meta(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    h["__metadata__"]["contract"] = text
    j = json.dumps(h).encode()
    j += b" " * (-len(j) % 8)
    open(path, "wb").write(struct.pack("<Q", len(j)) + j + b[8 + n:])
for f in glob.glob(d + "/*.safetensors"):
    meta(f)
if glob.glob(d + "/manifest.json"):
    m = json.load(open(d + "/manifest.json"))
    m["contract"] = text
    json.dump(m, open(d + "/manifest.json", "w"))
    open(d + "/contract.txt", "w").write(open(sys.argv[2]).read())
PY
}
recontract ext_part ext_right right.txt
recontract ext_part ext_wrong wrong.txt
code "$CLI" run --cases c.csv --no-golden --quiet --out r1 --backend bundle:ext_right
[ "$rc" = 0 ] || fail "bundle with right.txt's rules: exit $rc: $(cat err.txt)"
[ "$(verdict r1)" = PASS ] || fail "bundle with right.txt: $(verdict r1)"
code "$CLI" run --cases c.csv --no-golden --quiet --out r2 --backend bundle:ext_wrong
[ "$rc" = 1 ] || fail "bundle with wrong.txt's rules: exit $rc, expected 1: $(cat err.txt)"
/usr/bin/python3 - r2 <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1] + "/results.json"))
got = {e["name"]: (e["verdict"], e["contract"][:5], "final=rz" in e["contract"])
       for e in d["cases"] if e["backend"].startswith("bundle:")}
want = {"a": ("pass", "order", False), "b": ("pass", "order", False), "big": ("fail", "tree(", True)}
if got != want:
    sys.exit("rule_set_readers: bundle with wrong.txt: entries %s, expected %s" % (got, want))
PY
code "$CLI" run --cases c.csv --no-golden --quiet --out r3 --backend bundle:ext_part
[ "$rc" = 5 ] || fail "bundle with part.txt (no rule for Mpad 48): exit $rc, expected 5: $(cat err.txt)"
grep -q "no rule for M=40 N=32 K=1024" r3/results.json || fail "part.txt: M=40 not named as unjudged"

# capture(contracts={op: FILE}) with the rules, then verify (the captured calls have M 4 and 8)
"$CLI" export --cases c.csv --no-golden --with-expected --out wops --quiet > /dev/null
cp wops/a.safetensors wops/wide.safetensors && cp wops/b.safetensors wops/exact.safetensors
A4W4_TEST_CONTRACT_FILE=$WORK/right.txt /usr/bin/python3 "$SRC/tests/cli/capture/make_captures.py" \
  wops caps user || fail "make_captures exit $?"
code "$CLI" verify caps/user.safetensors
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "verify of the capture judged by right.txt: exit $rc"; }
grep -q '^PASS user.safetensors .*: ordered(1), ' out.txt || fail "verify: $(cat out.txt)"
printf 'when Mpad>32: ordered(1)\nwhen Mpad<=32,K%%512==256: ordered(1)\n' > none.txt
mkdir caps2 && cp caps/user.safetensors caps2/ && recontract caps2 caps2 none.txt
code "$CLI" verify caps2/user.safetensors
[ "$rc" = 2 ] || { cat out.txt err.txt; fail "verify of a capture no rule covers: exit $rc, expected 2"; }
grep -q "has no rule for M=4 N=32 K=1024" err.txt out.txt || fail "verify: $(cat out.txt err.txt)"
echo "rule sets: run, bundle contract.txt, external, capture and verify judge each shape by its rule"
