#!/usr/bin/env bash
# A capture whose kernel declares a tree contract (docs/contracts.md §4.2): blocks in
# descending K declaring tree(order=desc), on wide operands where that order differs from
# ordered(1) and from the exact sum. `verify` and `run --captures` must judge it the same
# (tests/cli/capture/same_judgement.py) and PASS it, every output judged bit for bit. Skips
# (77, one line) only while the CLI does not know tree contracts (a plugin declaring one is
# refused, tests/cli/gt/gt_common.sh gt_tree_known); a CLI that knows them must judge the
# capture too. Usage: capture_judge_tree.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
fail() { echo "capture_judge_tree: $*"; exit 1; }
. "$SRC/tests/cli/gt/gt_common.sh"
gt_need_tree
export PYTHONPATH="$SRC/python:$SRC/python/tests/fake_aiter:$SRC/python/tests" PYTHONDONTWRITEBYTECODE=1
{ echo "name,M,N,K,regime,seed,tags"
  grep '^m16_n192_k1024,' "$SRC/cases/premerge.csv" | sed 's/^m16_n192_k1024,/wide,/'
  grep '^m33_n192_k1024,' "$SRC/cases/premerge.csv" | sed 's/^m33_n192_k1024,/exact,/'; } > "$WORK/c.csv"
"$CLI" export --cases "$WORK/c.csv" --no-golden --with-expected --out "$WORK/ops" --quiet > /dev/null
/usr/bin/python3 "$SRC/tests/cli/capture/make_captures.py" "$WORK/ops" "$WORK/caps" tree ||
  fail "make_captures exit $?"

set +e
"$CLI" verify "$WORK/caps/tree.safetensors" > "$WORK/verify.txt" 2> "$WORK/verify.err"
vrc=$?
set -e
[ $vrc -eq 0 ] || fail "verify exit $vrc, expected 0: $(cat "$WORK/verify.txt" "$WORK/verify.err")"
printf 'name,M,N,K,regime,seed,tags\nt,1,16,64,exact,1,t\n' > "$WORK/t.csv"
"$CLI" run --cases "$WORK/t.csv" --no-golden --backend cpu-fallback --captures "$WORK/caps" \
  --out "$WORK/run" --quiet > "$WORK/run.log" 2>&1 || fail "run --captures exit $?: $(cat "$WORK/run.log")"
/usr/bin/python3 "$SRC/tests/cli/capture/same_judgement.py" "$WORK/verify.txt" "$WORK/run/results.json" \
  tree=PASS || fail "verify and run --captures disagree (above)"
grep -q "^PASS tree.safetensors \[called at [^]]*make_captures.py:[0-9]*\]: tree(leaf=32,order=desc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,combine=chain,final=rne), 3072 checked (3072 judged bit for bit, 0 within bound, 0 not judged; 3072 of the judged match)" \
  "$WORK/verify.txt" || fail "not every output judged bit for bit: $(cat "$WORK/verify.txt")"
echo "capture_judge_tree: the tree(order=desc) capture passes, judged the same by verify and run --captures"
