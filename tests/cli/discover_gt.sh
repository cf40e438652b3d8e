#!/usr/bin/env bash
# `a4w4check discover` recovers every ground-truth kernel's order (tests/plugins/gt/, each
# probed through its build that declares ordered(1): discover never reads the declaration):
# the discovered contract's canonical text equals the one its true build declares (the
# interleaved, round-robin and fused-leaf kernels too, found as trees beyond the interval
# model, contracts §4.4 step 7). A kernel
# that combines its four splits in a chain or pairwise at random per call is found
# nondeterministic and answered bounded(4); a kernel rounding block values to bf16 gets exit 1,
# "no tree in the model family fits" and the closest contract (contracts §4.4).
# Usage: discover_gt.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3 TOOLS=$4
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
fail() { echo "discover_gt: $*"; exit 1; }
SHAPE=$GT_FOUND_SHAPE # K past both boundaries of the three-split kernel (160, 1056)
# the contracts discover found at SHAPE (the fixture gt_found, tests/cli/gt_discover_found.sh)
found=$(gt_found_dir) || exit 1

for k in $GT_DISCOVERABLE; do
  want=$("$TOOLS/contract_text" --plugin "$GT_PLUGINS/liba4w4_gt_${k}_plugin.so")
  got=$("$TOOLS/contract_text" --file "$found/$k.txt")
  [ "$got" = "$want" ] || fail "gt-$k: discovered $got, its contract is $want"
  echo "gt-$k: $got ($(grep -o '([0-9]* probes, [0-9]* calls' "$found/$k.log" | tr -d '('))"
done

# the contracts found at one shape judge other shapes: the kernels whose order does not change
# with K pass every output of pre-merge cases of other M, N and K (K % 256 != 0 included)
gt_cases "$WORK/c.csv" s_m33_n256_k288 sp_m6_n32_k256 c0_m33_n256_k512 nr_m3_n24_k512 \
  m16_n192_k1024 c0_m64_n192_k2304
gt_run_discovered "$found" --cases "$WORK/c.csv" --no-golden --full || fail "a discovered contract failed"
echo "discover_gt: the contracts found at $SHAPE pass every output of 6 pre-merge cases"

# --repeats 8: the kernel picks its order per call at random, and only one or two probes tell
# the two orders apart; with the default 3 runs every run of such a probe takes the same
# order once in four (a fixed tree then fits), with 8 once in 128
"$CLI" discover --backend "plugin:$GT_PLUGINS/liba4w4_disc_combine_random_plugin.so" \
  --shapes 32x8x2048 --repeats 8 --out nd.txt --quiet --no-evidence > nd.log 2>&1 || fail "combine_random: exit $? ($(cat nd.log))"
[ "$("$TOOLS/contract_text" --file nd.txt)" = "bounded(4)" ] || fail "combine_random: $(cat nd.txt)"
grep -q "nondeterministic" nd.log || fail "combine_random: not reported nondeterministic"

set +e
"$CLI" discover --backend "plugin:$GT_PLUGINS/liba4w4_disc_bf16_leaf_plugin.so" \
  --shapes 32x8x1024 --out bf.txt --quiet --no-evidence > bf.log 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "bf16_leaf: exit $rc, expected 1: $(cat bf.log)"
grep -q "no tree in the model family fits; closest ordered(1): [0-9]* of [0-9]* checked outputs differ" bf.log \
  || fail "bf16_leaf: no closest named: $(cat bf.log)"
[ ! -e bf.txt ] || fail "bf16_leaf: a contract file was written"
grep -q "^# NOT ACCEPTED" bf.txt.closest && [ "$("$TOOLS/contract_text" --file bf.txt.closest)" = "ordered(1)" ] \
  || fail "bf16_leaf: FILE.closest does not hold the closest, marked not accepted"
grep -q "rejected ordered(1)" bf.txt.evidence.md || fail "bf16_leaf: the evidence lacks the rejection"
echo "discover_gt: every ground-truth order recovered; bounded(4) found; bf16 leaves fit no tree"
