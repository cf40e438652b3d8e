#!/usr/bin/env bash
# Every ground-truth kernel of tests/plugins/gt/ declaring its true tree contract
# (docs/contracts.md §4.2) passes every output of a few pre-merge cases, one or more per
# regime (exact, normal, wide, code0, special, tiny; K past both split boundaries), every
# output checked (--full). Skips (77, one line) only while the CLI does not know tree
# contracts (gt_common.sh gt_tree_known).
# gt_declared_premerge.sh runs the whole set. Usage: gt_declared.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
set +e; gt_tree_known; known=$?; set -e
[ $known -eq 0 ] || exit $known
gt_cases "$WORK/c.csv" s_m1_n256_k288 s_m33_n256_k288 s_m33_n256_k1344 t_m33_n256_k512 \
  sp_m6_n32_k256 sp_m20_n256_k512 c0_m33_n256_k512 c0_m64_n192_k2304 nr_m3_n24_k512 m16_n192_k1024
set +e
"$CLI" run --cases "$WORK/c.csv" --no-golden --full --quiet --out "$WORK/out" \
  --backend "$(gt_backends "")" $(gt_overrides) > "$WORK/log" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { echo "gt_declared: exit $rc, expected 0: $(cat "$WORK/log")"; gt_judge "$WORK/out" true; exit 1; }
gt_judge "$WORK/out" true
