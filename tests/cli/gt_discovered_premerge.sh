#!/usr/bin/env bash
# Ground truth end to end: every ground-truth kernel whose order is a rule of K (gt_common.sh
# GT_SHAPE_FREE: the earlier orders, fixed split boundaries, the interleaved, round-robin,
# per-tile, fused-leaf and xor-butterfly ones), probed by `discover` through its ordered(1)
# build at one shape, then run on the pre-merge set judged by the contract file discover wrote
# (`run --contract B=FILE`): exit 0, every entry passes, every output the run checks judged
# (docs/contracts.md §4.4). Then gt-mbucket (split-K by M's bucket), discovered at its default
# shapes (GT_MBUCKET_SHAPES) into rules of M: exit 0, every entry of every bucket judged and
# passing (gt_run_mbucket); and gt-splitk (its split count changes with K), discovered at
# GT_SPLITK_SHAPES into its split count as a function of K: every entry judged and passing
# (gt_run_splitk). CI runs a
# representative slice of the set's cases up to 2^26 MACs (gt_premerge_small: 77 cases, every
# regime and K; the 14 scalar kernels dominate; the
# same contracts, declared, run on the cases up to 2^30 in gt_declared_premerge, and
# discover_gt checks the discovered texts equal the declared ones); A4W4_GT_FULL=1 (label
# `wholeset`) the whole set with `--budget-seconds 10`. Heavy (label `heavy`). Usage: gt_discovered_premerge.sh CLI SRC WORK TOOLS
# In CI the ordered(1) builds' outputs on the slice are not computed again: the fixture
# gt_mis_kept (sh_gt_misdeclared_premerge, which runs the same builds on a slice holding this
# one) kept them, and they are judged here under the discovered contracts (gt_common.sh
# gt_run_as); the golden bundles, whose outputs are never kept, run through the plugins.
# The kernels run in process (--no-isolate): they are this project's own and cannot crash;
# the isolated path (a child per call, the operands' digests around it) is held by the
# smaller gt runs (sh_gt_declared, sh_gt_misdeclared) and the plugin tests, and here cost a
# third of the CPU (declared: 68 CPU s isolated, 43 in process; the same entries).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
found=$(gt_found_dir) || exit 1 # discovered at 32x8x1152 (the fixture gt_found)
cd "$SRC"
if [ "${A4W4_GT_FULL:-0}" = 1 ]; then
  gt_run_discovered "$found" --set premerge --budget-seconds 10 --no-isolate
else
  gt_premerge_small "$WORK/premerge-small.csv" 67108864
  # the ordered(1) builds' outputs on this slice (part of sh_gt_misdeclared_premerge's, every
  # case under 2^26 MACs kept in full there: the fixture gt_mis_kept) judged again under the
  # discovered contracts, not computed again; the golden bundles run through the plugins
  # (gt_common.sh gt_run_as)
  GT_KEPT=$(gt_kept_dir) || exit 1
  GT_KEPT_CASES=$WORK/premerge-small.csv
  gt_run_discovered "$found" --cases "$WORK/premerge-small.csv" --no-isolate
fi
if [ "${A4W4_GT_FULL:-0}" = 1 ]; then
  gt_run_mbucket "$WORK/found" --set premerge --budget-seconds 10 --no-isolate
else
  gt_run_mbucket "$WORK/found" --cases "$WORK/premerge-small.csv" --no-isolate
fi
if [ "${A4W4_GT_FULL:-0}" = 1 ]; then
  gt_run_splitk "$WORK/found" --set premerge --budget-seconds 10 --no-isolate
else
  gt_run_splitk "$WORK/found" --cases "$WORK/premerge-small.csv" --no-isolate
fi
echo "gt_discovered_premerge: $(wc -w <<<"$GT_SHAPE_FREE") kernels pass the pre-merge set under the contracts discovered at 32x8x1152"
