#!/usr/bin/env bash
# discover writes a split count that changes with K as a rule of K (contracts §4.4, "The split
# count as a function of K"): gt-splitk (S = 1, 2, 3, 4 parts of round_up(ceil(K/S), 64) up to
# K 1184, 1760, 2592 and above, cuBLAS's pattern on an H100), discovered through its ordered(1)
# build at its default shapes (probed K 544, 1024 and 3072: counts 1, 1, 4), bisects the count
# in steps of 32 and writes one `when K<=..` rule per count, the change points exactly where
# the kernel changes. Judged by that file it passes at K never probed or bisected, inside each
# range and beside every change point; judged by one count for every K (the largest K's, or
# the one K 1024 shows) it fails. A kernel whose count falls as K grows keeps per-shape rules. Reproducer: before the rule, discover wrote one `when M==..,N==..,K==..`
# rule per probed shape, so none of these K was judged.
. "$(dirname "$0")/common.sh.inc"
. "$SRC/tests/cli/gt/gt_common.sh"
B="plugin:$P/liba4w4_gt_splitk_mis_plugin.so"
body() { grep -v '^#' "$1"; }
# each probe runs once (--repeats 1): the kernels are deterministic and no assertion here is
# about nondeterminism (discover_gt's random-combine kernel holds that, with --repeats 8)
"$CLI" discover --backend "$B" --shapes "$GT_SPLITK_SHAPES" --out k.txt --quiet --no-evidence \
  --repeats 1 > k.log 2>&1 || fail "discover: exit $? ($(cat k.log))"
T0="tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split="
T1=",combine=chain,final=rne,align=64)"
want=$(printf 'when K<=1184: ordered(1)\nwhen K<=1760: %s2%s\nwhen K<=2592: %s3%s\n%s4%s' \
  "$T0" "$T1" "$T0" "$T1" "$T0" "$T1")
[ "$(body k.txt)" = "$want" ] || fail "discover wrote $(cat k.txt)"
grep -q '^# rules of K validated (not probed) at 32x8x3232 31x8x1856$' k.txt || fail "comments: $(cat k.txt)"
# every change located between two K 32 apart, each side read
grep -q '^# split count by K (M=32, N=8): read at K 544 (S 1) .*1184 (S 1, bisected) 1216 (S 2, bisected) .*1760 (S 2, bisected) 1792 (S 3, bisected) .*2592 (S 3, bisected) 2624 (S 4, bisected) .*3072 (S 4); S parts of round_up(ceil(K/S), 64)' k.txt ||
  fail "the split-count comment: $(cat k.txt)"
# the probe bound (contracts §4.4): counts 1 -> 4 over 63 steps of 32 between K 1024 and 3072,
# at most 3 changes x 6 halvings = 18 K bisected
nb=$(grep -c '(a K of the split-count bisection): split count read' k.log)
[ "$nb" -ge 9 ] && [ "$nb" -le 18 ] || fail "$nb K bisected, expected 9 to 18: $(cat k.log)"

# judged at K never probed nor bisected: inside each range and beside each change point
printf 'name,M,N,K,regime,seed,tags\n' > c.csv
i=0
for k in 96 800 1120 1248 1504 1696 1824 2208 2528 2656 3008 4000 6016; do
  for r in normal wide code0; do
    i=$((i + 1))
    echo "k${k}_$r,$((30 + i % 5)),64,$k,$r,$i," >> c.csv
  done
done
code "$CLI" run --cases c.csv --no-golden --full --quiet --out r1 --backend "$B" --contract "$B=k.txt" \
  --e8m0-code0 2^-127
[ "$rc" = 0 ] || fail "under the discovered rules: exit $rc: $(cat err.txt)"
/usr/bin/python3 - r1 <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1] + "/results.json"))
es = [e for e in d["cases"] if "_gt_" in e["backend"] and not e["name"].endswith("/call-sequence")]
bad = [(e["name"], e["verdict"]) for e in es if e["verdict"] != "pass" or e["judged_bit_exact"] != e["M"] * 64]
if len(es) != 39 or bad or d["verdict"] != "PASS":
    sys.exit("discover_splitk: %d entries, not every one passing with every output judged: %s (%s)"
             % (len(es), bad, d["verdict"]))
PY
# one count for every K fails: the largest K's (4 parts), and the count K 1024 shows (one;
# caught by a few wide and code-0 outputs: K 1248, 1504, 2208, 3008 and 4000)
for one in "${T0}4$T1" "ordered(1)"; do
  echo "$one" > one.txt
  code "$CLI" run --cases c.csv --no-golden --full --quiet --out r2 --backend "$B" --contract "$B=one.txt" \
    --e8m0-code0 2^-127
  [ "$rc" = 1 ] || fail "judged by $one at every K: exit $rc, expected 1: $(cat err.txt)"
done

# a count that falls as K grows (disc-split-falls: 3 parts below K 1024, 2 from it) is outside
# the monotone assumption: no rule of K, the reason in the evidence, one rule per probed shape
F="plugin:$P/liba4w4_disc_split_falls_plugin.so"
"$CLI" discover --backend "$F" --shapes 32x8x1024,32x8x2048 --out f.txt --quiet --no-evidence \
  --repeats 1 > f.log 2>&1 || fail "discover split_falls: exit $? ($(cat f.log))"
[ "$(body f.txt | grep -c '^when M==32,N==8,K==')" = 3 ] && [ "$(body f.txt | wc -l)" = 3 ] ||
  fail "split_falls: not one rule per probed shape: $(cat f.txt)"
grep -q 'the split count falls as K grows (3 at K=544, 2 at K=1024), outside the monotone assumption' \
  f.txt.evidence.md || fail "split_falls: the evidence does not say why: $(grep -i 'split count' f.txt.evidence.md)"
echo "discover_splitk: $nb K bisected; the rule of K passes $i cases at K never probed, one count for every K fails"
