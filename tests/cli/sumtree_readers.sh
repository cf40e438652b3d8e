#!/usr/bin/env bash
# The general form tree(...,sum=(...)) (contracts §4.2 "The general form") is taken by every
# reader of contracts and applies to its one K: `run --contract B=TEXT` and `B=FILE` judge a
# case of that K bit for bit (the chain spelling of ordered(1) passes the reference plugin, a
# final=rz one fails it) and leave a case of another K not judged (INCOMPLETE, exit 5, never
# judged by the tree of another K), as does a bundle whose contract.txt is the file and
# `report`; a capture given the file is judged by `verify` at its K and refused at another
# (exit 2). Reproducer: "unknown key 'sum'", exit 2, from every reader.
. "$(dirname "$0")/common.sh.inc"
export PYTHONPATH="$SRC/python:$SRC/python/tests/fake_aiter:$SRC/python/tests:$SRC/tests/cli/capture:$WORK" \
  PYTHONDONTWRITEBYTECODE=1
REF="plugin:$P/liba4w4_ref_plugin.so"
# K 128: 4 blocks. ordered(1) is the chain from +0: node(+0, b0), then + b1, + b2, + b3
CHAIN='tree(sum=((((0),1),2),3))'
printf 'name,M,N,K,regime,seed,tags\na,4,32,128,normal,1,\n' > one.csv
printf 'name,M,N,K,regime,seed,tags\na,4,32,128,normal,1,\nother,4,32,256,normal,2,\n' > two.csv
printf '# discovered by a4w4check discover (the shape probed only)\nwhen M==4,N==32,K==128: %s\n' \
  "$CHAIN" > rule.txt

code "$CLI" run --cases one.csv --no-golden --quiet --out r0 --backend "$REF" --contract "$REF=$CHAIN"
[ "$rc" = 0 ] || fail "run --contract the chain sum tree: exit $rc: $(cat err.txt)"
grep -qF 'tree(prec=0,round=rne,acc=fp32,final=rne,sum=((((0),1),2),3))' r0/results.json ||
  fail "results.json does not record the canonical sum tree"
code "$CLI" report r0 --format md --out -
[ "$rc" = 0 ] && grep -qF 'sum=((((0),1),2),3))' out.txt || fail "report of r0: exit $rc: $(cat err.txt)"
code "$CLI" run --cases one.csv --no-golden --quiet --out r1 --backend "$REF" \
  --contract "$REF=tree(final=rz,sum=((((0),1),2),3))"
[ "$rc" = 1 ] || fail "run --contract a final=rz sum tree: exit $rc, expected 1"
code "$CLI" run --cases two.csv --no-golden --quiet --out r2 --backend "$REF" --contract "$REF=$CHAIN"
[ "$rc" = 5 ] || fail "run over K 128 and 256: exit $rc, expected 5 (K 256 not judged): $(cat err.txt)"
grep -q "sum names 4 blocks (K=128), not K=256" r2/results.json || fail "K 256 is not named as unjudged"
code "$CLI" run --cases two.csv --no-golden --quiet --out r3 --backend "$REF" --contract "$REF=rule.txt"
[ "$rc" = 5 ] || fail "run --contract rule.txt: exit $rc, expected 5: $(cat err.txt)"
/usr/bin/python3 - r3 <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1] + "/results.json"))
got = {e["name"]: e["verdict"] for e in d["cases"] if e["backend"].startswith("plugin:")}
# the call sequence (docs/backends.md) also calls K 256, which the one-K sum tree does not judge
if got != {"a": "pass", "other": "skip", "a/call-sequence": "skip"}:
    sys.exit("sumtree_readers: rule.txt: entries %s, expected a pass, other skip" % got)
# the call not judged is named in the sequence's entry, with the reason (before: not said)
seq = [e for e in d["cases"] if e["name"] == "a/call-sequence"][0]
if "call 4 of 5 (4x32x256) not judged: contract rule.txt has no rule for M=4 N=32 K=256" not in seq["note"]:
    sys.exit("sumtree_readers: the sequence's unjudged call is not named: " + seq["note"])
PY
# a rule for the sequence's other shape judges that call under it: the sequence passes
cp rule.txt rule2.txt
echo 'when K==256: ordered(1)' >> rule2.txt
code "$CLI" run --cases two.csv --no-golden --quiet --out r3b --backend "$REF" --contract "$REF=rule2.txt"
[ "$rc" = 0 ] || fail "run --contract rule2.txt: exit $rc, expected 0: $(cat err.txt)"
/usr/bin/python3 -c 'import json, sys; d = json.load(open("r3b/results.json"))
sys.exit(0 if [e["verdict"] for e in d["cases"] if e["name"] == "a/call-sequence"] == ["pass"] else 1)' ||
  fail "rule2.txt: the call sequence is not one passing entry"
code "$CLI" run --cases one.csv --no-golden --quiet --out r4 --backend "$REF" --contract "$REF=tree(sum=(0,0))"
[ "$rc" = 2 ] && grep -q "block 0 appears twice" err.txt || fail "a bad sum tree: exit $rc: $(cat err.txt)"

# a bundle whose contract.txt is the file (python -m a4w4check.external --contract FILE)
"$CLI" export --cases two.csv --no-golden --out ops --quiet > /dev/null
cat > kern.py <<'PY'
from make_captures import ordered1
def gemm(a_fp4, w_fp4, a_scale, w_scale, **rest):
    return ordered1(a_fp4, w_fp4, a_scale, w_scale)
PY
code /usr/bin/python3 -m a4w4check.external --ops ops --out ext --kernel kern:gemm --contract rule.txt
[ "$rc" = 0 ] || { cat err.txt; fail "external --contract rule.txt: exit $rc"; }
code "$CLI" run --cases two.csv --no-golden --quiet --out r5 --backend bundle:ext
[ "$rc" = 5 ] || fail "bundle with the sum-tree rule: exit $rc, expected 5 (K 256 not judged): $(cat err.txt)"
/usr/bin/python3 - r5 <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1] + "/results.json"))
got = {e["name"]: e["verdict"] for e in d["cases"] if e["backend"].startswith("bundle:")}
if got != {"a": "pass", "other": "skip"}:
    sys.exit("sumtree_readers: bundle: entries %s, expected a pass, other skip" % got)
PY

# capture(contracts={op: rule.txt}), then verify: judged at K 128, refused at K 256
"$CLI" export --cases two.csv --no-golden --with-expected --out wops --quiet > /dev/null
cp wops/a.safetensors wops/wide.safetensors && cp wops/a.safetensors wops/exact.safetensors
A4W4_TEST_CONTRACT_FILE=$WORK/rule.txt /usr/bin/python3 "$SRC/tests/cli/capture/make_captures.py" \
  wops caps user || fail "make_captures exit $?"
code "$CLI" verify caps/user.safetensors
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "verify of the K 128 capture: exit $rc"; }
grep -q '^PASS user.safetensors .*sum=((((0),1),2),3))' out.txt || fail "verify: $(cat out.txt)"
cp wops/other.safetensors wops/wide.safetensors
A4W4_TEST_CONTRACT_FILE=$WORK/rule.txt /usr/bin/python3 "$SRC/tests/cli/capture/make_captures.py" \
  wops caps2 user || fail "make_captures exit $?"
code "$CLI" verify caps2/user.safetensors
[ "$rc" = 2 ] || { cat out.txt err.txt; fail "verify of a K 256 capture under a K 128 rule: exit $rc"; }
echo "sum trees: run (text and file), capture and verify judge the one K and leave others unjudged"
