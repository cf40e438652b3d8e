#!/usr/bin/env bash
# `a4w4check discover` separates a kernel's order from its defects, and writes a rule per shape
# when the order depends on the shape (contracts §4.4 step 7 and the rules of §4.2):
# - a kernel keeping tree(order=desc) that outputs NaN wherever an operand overflows bf16 once
#   scaled (every order gives a finite value there) is accepted as tree(order=desc), exit 0,
#   with "defects: N" printed, counted in the contract file and listed in the evidence;
# - a kernel whose every output is NaN gets no contract (exit 1);
# - a kernel whose splits depend on K (P parts aligned to 64 elements, P changing with K, as
#   cuBLAS's) gets a rule of K with one `when K<=..` rule per count (contracts §4.4, "The split
#   count as a function of K"); `run --contract B=FILE` judges both probed shapes and a third
#   K bit for bit (a pass, every output judged), and the ordered(3) the kernel declares, and
#   one K's splits as boundaries, fail. Usage: discover_defects.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3 TOOLS=$4
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
P=$(dirname "$CLI")/plugins
# every discover here runs each probe once (--repeats 1): these kernels are deterministic and no
# assertion here is about nondeterminism (discover_gt's random-combine kernel holds that, with
# --repeats 8); the default 3 runs computed the same outputs three times
fail() { echo "discover_defects: $*"; exit 1; }

# the known tree beside its defects
"$CLI" discover --backend "plugin:$P/liba4w4_disc_upcast_nan_plugin.so" --shapes 32x8x1152 \
  --out up.txt --quiet --no-evidence --repeats 1 > up.log 2>&1 || fail "upcast_nan: exit $? ($(cat up.log))"
want=$("$TOOLS/contract_text" "tree(order=desc)")
[ "$("$TOOLS/contract_text" --file up.txt)" = "$want" ] || fail "upcast_nan: $(cat up.txt)"
n=$(sed -n 's/^  defects: \([0-9]*\) (first: case .*row [0-9]*, col [0-9]*: got 0x7fff, every order left open gives a finite value.*/\1/p' up.log | head -1)
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "upcast_nan: no defects line: $(cat up.log)"
grep -q "^# 32x8x1152: $n validation outputs are defects" up.txt || fail "upcast_nan: the file does not count them: $(cat up.txt)"
[ "$(grep -c '^- case discover/32x8x1152/.*got 0x7fff' up.txt.evidence.md)" = "$n" ] || fail "upcast_nan: the evidence does not list all $n"

# NaN everywhere: no order
set +e
"$CLI" discover --backend "plugin:$P/liba4w4_disc_nan_all_plugin.so" --shapes 32x8x1152 \
  --out na.txt --quiet --no-evidence --repeats 1 > na.log 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "nan_all: exit $rc, expected 1: $(cat na.log)"
grep -q "no tree in the model family fits" na.log || fail "nan_all: $(cat na.log)"
[ ! -e na.txt ] || fail "nan_all: a contract file was written"

# a split count that depends on K (contracts §4.4, "The split count as a function of K"): one
# family (N 64, Mpad 64) probed at K 1024, 2048 and 544 (3, 3 and 2 parts), the count bisected
# between K 544 and 1024 (768, 896, 960, 992), written as a rule of K that judges every K.
# Reproducer: before that rule, one `when M==..,N==..,K==..` rule per probed K, K 1536 not judged
B="plugin:$P/liba4w4_disc_split_by_k_plugin.so"
"$CLI" discover --backend "$B" --shapes 64x64x1024,64x64x2048 --out sk.txt --quiet --no-evidence --repeats 1 > sk.log 2>&1 \
  || fail "split_by_k: exit $? ($(cat sk.log))"
grep -q "^when K<=992: tree(.*split=2,combine=chain,final=rne,align=64)$" sk.txt || fail "split_by_k: $(cat sk.txt)"
grep -q "^tree(.*split=3,combine=chain,final=rne,align=64)$" sk.txt || fail "split_by_k: $(cat sk.txt)"
[ "$(grep -vc '^#' sk.txt)" = 2 ] || fail "split_by_k: not a rule of K: $(cat sk.txt)"
# seeded cases whose bf16 outputs tell these splits from others (a few outputs each: the
# declared ordered(3) fails sk_1024, K = 1024's splits fail both sk_2048 cases); E8M0 code 0
# read as 2^-127, the reading the test kernels implement (contracts §1)
printf 'name,M,N,K,regime,seed,tags\nsk_1024,64,64,1024,code0,11,t\nsk_2048,64,64,2048,wide,13,t\nsk_2048b,64,64,2048,wide,14,t\n' > c2.csv
{ cat c2.csv; echo "sk_1536,64,64,1536,exact,13,t"; } > c.csv
set +e
"$CLI" run --e8m0-code0 2^-127 --cases c.csv --no-golden --full --quiet --out judged --backend "$B" \
  --contract "$B=$WORK/sk.txt" > run.log 2>&1
rc=$?
set -e
/usr/bin/python3 - "$rc" judged/results.json <<'PY' || fail "run --contract: $(cat run.log)"
import json, sys
rc, doc = int(sys.argv[1]), json.load(open(sys.argv[2]))
e = {c["name"]: c for c in doc["cases"] if c["backend"].startswith("plugin:")}
for n in ("sk_1024", "sk_2048", "sk_2048b", "sk_1536"):
    assert e[n]["verdict"] == "pass" and e[n]["judged_bit_exact"] == 4096, (n, e[n])
assert rc == 0, rc
PY
set +e
"$CLI" run --e8m0-code0 2^-127 --cases c2.csv --no-golden --full --quiet --out declared --backend "$B" > run2.log 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "split_by_k judged by its ordered(3) declaration: exit $rc, expected 1: $(cat run2.log)"
# K = 1024's splits as boundaries (what one probed K shows) judge K = 2048 by the wrong split
echo "tree(split=0/384/768)" > one.txt
set +e
"$CLI" run --e8m0-code0 2^-127 --cases c2.csv --no-golden --full --quiet --out one --backend "$B" \
  --contract "$B=$WORK/one.txt" > run3.log 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "split_by_k judged by K = 1024's contract everywhere: exit $rc, expected 1: $(cat run3.log)"
echo "discover_defects: tree(order=desc) kept beside $n defects; NaN everywhere fits no tree; a split count that changes with K judged by its rule of K"
