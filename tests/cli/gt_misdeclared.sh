#!/usr/bin/env bash
# Every ground-truth kernel of tests/plugins/gt/ declared ordered(1) (its _mis build) is caught
# on a few pre-merge cases (exit 1, each kernel with a failing entry, no other backend
# failing), and the ordered(1) reference plugin beside them passes. The cases are the cheapest
# pre-merge ones that tell these orders from ordered(1): wide and code-0 scales (measured: the
# exact, normal, tiny, special and golden cases never do). gt_misdeclared_premerge.sh runs the
# whole set. Usage: gt_misdeclared.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
gt_cases "$WORK/c.csv" c0_m33_n256_k512 c0_m64_n192_k2304 nr_m3_n24_k512 m16_n192_k1024
B="$(gt_backends _mis),plugin:$GT_PLUGINS/liba4w4_ref_plugin.so"
set +e
"$CLI" run --cases "$WORK/c.csv" --no-golden --quiet --out "$WORK/out" --backend "$B" > "$WORK/log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { echo "gt_misdeclared: exit $rc, expected 1: $(cat "$WORK/log")"; exit 1; }
gt_judge "$WORK/out" mis
