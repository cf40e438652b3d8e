#!/usr/bin/env bash
# Every ground-truth kernel (tests/plugins/gt/) whose discovered contract is a rule of K,
# probed through its build that declares ordered(1), judged by the contract `discover` found
# for it (`run --contract B=FILE`) passes every output of a few pre-merge cases of every regime
# but wide (--full), every output judged bit for bit; the same builds judged by their ordered(1)
# declaration fail (contracts §4.4). The builds run once (the ordered(1) run, outputs kept); the
# discovered contracts judge those outputs. Usage: discover_judged.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
# the per-256-K tile kernel included: discover probes three K and writes tile=256, its rule of
# K (found at K 1152 alone it was ordered(5), that K's order only; contracts §4.4), and the
# three-split kernel, whose boundaries fixed in K are its rule of K (one `when K>b` rule per
# count of boundaries below K), and the xor butterfly (FPRev's pair probes, written lanecomb=xor)
GT_KERNELS=$GT_SHAPE_FREE
fail() { echo "discover_judged: $*"; exit 1; }
# the contracts discover found at 32x8x1152 (the fixture gt_found, tests/cli/gt_discover_found.sh)
found=$(gt_found_dir) || exit 1
backends=""
for k in $GT_KERNELS; do
  backends="$backends,plugin:$GT_PLUGINS/liba4w4_gt_${k}_mis_plugin.so"
done
# K past 1056: the three-split kernel's contract (split=160/1056) applies (contracts §4.2)
gt_cases c.csv s_m33_n256_k1344 s_m64_n256_k1344 sp_m64_n128_k2048 s_m1_n256_k1344 \
  t_m2_n192_k2048 c0_m64_n192_k2304 m2_n512_k4096
# the ordered(1) declarations first, their outputs kept (run --keep-outputs); those same outputs
# are then judged by the discovered contracts (gt_common.sh gt_replay: `bundle:DIR` of links to
# them, every output checked) instead of computed a second time
set +e
"$CLI" run --e8m0-code0 2^-127 --cases c.csv --no-golden --full --quiet --out declared --backend "${backends#,}" \
  --keep-outputs kept > run2.log 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "the ordered(1) declarations: exit $rc, expected 1: $(cat run2.log)"
gt_judge declared mis
replays="" overrides=()
for k in $GT_KERNELS; do
  b=$(gt_replay "$WORK/kept" "$GT_PLUGINS/liba4w4_gt_${k}_mis_plugin.so" c.csv "$WORK/replay") || exit 1
  replays="$replays,$b"
  overrides+=(--contract "$b=$found/$k.txt")
done
set +e
"$CLI" run --e8m0-code0 2^-127 --cases c.csv --no-golden --full --quiet --out discovered --backend "${replays#,}" \
  "${overrides[@]}" > run.log 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { echo "run with the discovered contracts: exit $rc: $(cat run.log)"; gt_judge discovered true; exit 1; }
gt_judge discovered true
