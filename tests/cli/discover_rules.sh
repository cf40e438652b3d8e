#!/usr/bin/env bash
# discover writes rules of the shape (contracts §4.4, "Rules of the shape"): it probes three K
# per family of N and padded-M bucket (one with K % 256 != 0), infers the rule of K and
# validates it on shapes it did not probe (another K, another M of the bucket), and the file
# says which shapes were probed and which only validated. The per-256-K tile kernel comes out
# as tile=256 (found at one K it was ordered(5) at K 1152, which fails at every other K), and
# the kernel whose split-K follows M's bucket as rules of M (the buckets between the requested
# ones checked, runs of one rule written as Mpad ranges), the one splitting K at fixed elements
# as one rule per count of boundaries below K; judged by what discover wrote, they pass at
# shapes never probed, and a bucket whose rule the probed K cannot show is not judged.
. "$(dirname "$0")/common.sh.inc"
G=$P/liba4w4_gt
body() { grep -v '^#' "$1"; }
# every discover here runs each probe once (--repeats 1): the ground-truth kernels are
# deterministic and no assertion here is about nondeterminism (discover_gt's random-combine
# kernel holds that, with --repeats 8)

"$CLI" discover --backend "plugin:${G}_tiles256_mis_plugin.so" --shapes 32x8x1152 --out t.txt \
  --quiet --no-evidence --repeats 1 > t.log 2>&1 || fail "discover tiles256: exit $? ($(cat t.log))"
[ "$(body t.txt)" = "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,combine=chain,final=rne,tile=256)" ] ||
  fail "tiles256: discover wrote $(cat t.txt)"
grep -q '^# discovered by a4w4check discover: probed at 32x8x1152 32x8x608 32x8x960$' t.txt &&
  grep -q '^# rules of K validated (not probed) at 32x8x1312 31x8x928$' t.txt || fail "tiles256: comments $(cat t.txt)"
grep -q "not probed: the rule of K" t.txt.evidence.md || fail "tiles256: the evidence does not say what was only validated"

"$CLI" discover --backend "plugin:${G}_mbucket_mis_plugin.so" --shapes 8x16x1152,600x16x1152 \
  --out m.txt --quiet --no-evidence --repeats 1 > m.log 2>&1 || fail "discover mbucket: exit $? ($(cat m.log))"
# rules of M: 25 buckets lie between the requested Mpad 16 and 608, 24 of them checked (their
# round-1 probes and validation cases held to both neighbours' rules of K): ordered(2) holds at
# 32, ordered(1) from 48; Mpad 576, not checked, matches no range though both sides keep
# ordered(1). Reproducer: `when Mpad==16: ...` / `when Mpad==608: ...`, every other bucket not
# judged.
[ "$(body m.txt)" = "$(printf 'when Mpad<=32: ordered(2)\nwhen Mpad>=48,Mpad<=544: ordered(1)\nwhen Mpad>=608: ordered(1)')" ] ||
  fail "mbucket: discover wrote $(cat m.txt)"
grep -q '^# rules of M: probed Mpad 16 608; checked (round-1 probes and validation) Mpad 32 48 64 .* 544; no rule (not checked) Mpad 576; Mpad below 16 and above 608 assumed' m.txt ||
  fail "mbucket: the rules of M comment: $(cat m.txt)"

# judged by the discovered rules at shapes never probed (K 800: K % 256 != 0)
printf 'name,M,N,K,regime,seed,tags\n' > c.csv
for s in 12:1344:normal 5:800:wide 16:2048:exact 44:1344:normal 33:800:wide 48:2048:special \
         20:1344:normal 30:800:wide 300:1344:normal; do
  IFS=: read -r m k r <<< "$s"
  echo "m${m}_k$k,$m,16,$k,$r,$m," >> c.csv
done
T="plugin:${G}_tiles256_mis_plugin.so" M="plugin:${G}_mbucket_mis_plugin.so"
code "$CLI" run --cases c.csv --no-golden --quiet --out r1 --backend "$T,$M" \
  --contract "$T=t.txt" --contract "$M=m.txt" --e8m0-code0 2^-127
[ "$rc" = 0 ] || fail "run under the discovered rules: exit $rc: $(cat err.txt)"
/usr/bin/python3 - r1 <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1] + "/results.json"))
es = [e for e in d["cases"] if "_gt_" in e["backend"]]
bad = [(e["name"], e["backend"][-30:], e["verdict"]) for e in es if e["verdict"] != "pass"]
# 18 cases and each plugin's call sequence (docs/backends.md "Call sequences"), all judged
if len(es) != 20 or bad or d["verdict"] != "PASS":
    sys.exit("discover_rules: %d entries, not passing: %s (%s)" % (len(es), bad, d["verdict"]))
PY
# split-K at fixed K elements (gt-splits: [0, 160), [160, 1056), [1056, K), a range at or past
# K empty): probed at K 1152, 608 and 960 it cuts at 160 and 1056, then at 160 alone; the rule
# of K keeps the boundaries fixed, each K cut at those below it, one `when K>b` rule per count.
# Reproducer: no rule of K, one rule per probed shape, so every other K was not judged.
S="plugin:${G}_splits_mis_plugin.so"
"$CLI" discover --backend "$S" --shapes 32x8x1152 --out s.txt --quiet --no-evidence --repeats 1 \
  > s.log 2>&1 || fail "discover splits: exit $? ($(cat s.log))"
T0="tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split="
T1=",combine=chain,final=rne)"
[ "$(body s.txt)" = "$(printf 'when K>1056: %s0/160/1056%s\nwhen K>160: %s0/160%s\n%s1%s' \
  "$T0" "$T1" "$T0" "$T1" "$T0" "$T1")" ] || fail "splits: discover wrote $(cat s.txt)"
grep -q '^# rules of K validated (not probed) at 32x8x1312 31x8x928$' s.txt || fail "splits: comments $(cat s.txt)"
# judged at K never probed on each side of both boundaries (K 96, 800, 2048)
printf 'name,M,N,K,regime,seed,tags\nk96,4,16,96,normal,1,\nk800,9,16,800,wide,2,\nk2048,2,16,2048,normal,3,\n' > cs.csv
code "$CLI" run --cases cs.csv --no-golden --quiet --out r2 --backend "$S" --contract "$S=s.txt"
[ "$rc" = 0 ] || fail "splits under the discovered rules at K 96, 800, 2048: exit $rc: $(cat err.txt)"
/usr/bin/python3 - r2 <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1] + "/results.json"))
got = {e["name"]: e["verdict"] for e in d["cases"] if "_gt_" in e["backend"]}
if got != {"k96": "pass", "k800": "pass", "k2048": "pass", "k96/call-sequence": "pass"}:
    sys.exit("discover_rules: splits entries %s, expected every one pass" % got)
PY

# split-K in 3 parts aligned to 64 elements (gt-split3a64, cuBLAS's pattern): probed at K 1152,
# 608 and 960 it cuts at 384/768, 256/512 (ordered(3) there) and 320/640; the rule of K is
# tree(split=3,align=64), judged at K never probed (96: two parts; 800, 2048, 4096).
# Reproducer: no rule of K, one rule per probed shape, so every other K was not judged.
A3="plugin:${G}_split3a64_mis_plugin.so"
"$CLI" discover --backend "$A3" --shapes 32x8x1152 --out a.txt --quiet --no-evidence --repeats 1 \
  > a.log 2>&1 || fail "discover split3a64: exit $? ($(cat a.log))"
[ "$(body a.txt)" = "${T0}3${T1%)},align=64)" ] || fail "split3a64: discover wrote $(cat a.txt)"
grep -q '^# rules of K validated (not probed) at 32x8x1312 31x8x928$' a.txt || fail "split3a64: comments $(cat a.txt)"
printf 'name,M,N,K,regime,seed,tags\nk96,4,16,96,normal,1,\nk800,9,16,800,wide,2,\nk2048,2,16,2048,normal,3,\nk4096,3,16,4096,normal,4,\n' > ca.csv
code "$CLI" run --cases ca.csv --no-golden --quiet --out r4 --backend "$A3" --contract "$A3=a.txt"
[ "$rc" = 0 ] || fail "split3a64 under the discovered rule at K 96, 800, 2048, 4096: exit $rc: $(cat err.txt)"

# one element per node (gt-leaf1, an FMA chain over exact products, as a BLAS sgemm on the
# dequantized operands): the tie (+1) and the tail (+0.5) of step 5's probe sit in two nodes,
# so it tells no precision. Reproducer: read as P = 25, every candidate rejected, exit 1.
L1="plugin:${G}_leaf1_mis_plugin.so"
"$CLI" discover --backend "$L1" --shapes 8x16x512 --out l.txt --quiet --no-evidence --repeats 1 \
  > l.log 2>&1 || fail "discover leaf1: exit $? ($(cat l.log))"
[ "$(body l.txt)" = "tree(leaf=1,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,combine=chain,final=rne)" ] ||
  fail "leaf1: discover wrote $(cat l.txt)"

# a bucket no rule covers is not judged: requested at K 288 for Mpad 16, where ordered(2) cuts
# [0, 256) and [256, 288), the same tree as ordered(1), Mpad 32 cannot show which neighbour's rule
# it keeps, so it gets none and M 20 (Mpad 32) is not judged
"$CLI" discover --backend "$M" --shapes 8x16x288,40x16x1152 --out g.txt --quiet --no-evidence \
  --repeats 1 > g.log 2>&1 || fail "discover mbucket at K 288: exit $? ($(cat g.log))"
grep -q '^# rules of M: probed Mpad 16 48; no rule (neither or both neighbours.* Mpad 32;' g.txt &&
  [ "$(body g.txt | sed 's/:.*//')" = "$(printf 'when Mpad<=16\nwhen Mpad>=48')" ] ||
  fail "mbucket at K 288: discover wrote $(cat g.txt)"
printf 'name,M,N,K,regime,seed,tags\nm20,20,16,1344,normal,3,\n' > c20.csv
code "$CLI" run --cases c20.csv --no-golden --quiet --out r3 --backend "$M" --contract "$M=g.txt"
[ "$rc" = 5 ] || fail "M 20 under rules for Mpad <=16 and >=48: exit $rc, expected 5: $(cat err.txt)"
grep -q "has no rule for M=20 N=16 K=1344" r3/results.json || fail "M 20: the reason is not given"
# and a bucket not checked (Mpad 576, M 570) is not judged
printf 'name,M,N,K,regime,seed,tags\nm570,570,16,1344,normal,3,\n' > c570.csv
code "$CLI" run --cases c570.csv --no-golden --quiet --out r5 --backend "$M" --contract "$M=m.txt"
[ "$rc" = 5 ] || fail "M 570 (Mpad 576, not checked): exit $rc, expected 5: $(cat err.txt)"
grep -q "has no rule for M=570 N=16 K=1344" r5/results.json || fail "M 570: the reason is not given"
echo "discover_rules: tile=256, split=3,align=64 and rules of M, validated and judged at shapes never probed"
