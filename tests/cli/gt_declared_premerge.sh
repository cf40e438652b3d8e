#!/usr/bin/env bash
# The whole pre-merge set (golden bundles included) through every ground-truth kernel declaring
# its true tree contract (docs/contracts.md §4.2): exit 0, every kernel entry passes, every
# output the run checks judged. CI runs a representative slice of the set's cases up to 2^30
# MACs and the golden bundles (gt_premerge_small); A4W4_GT_FULL=1 (label `wholeset`) runs the whole set and checks every output (`--budget-seconds 10`: 16 scalar
# kernels over 10 M outputs, many minutes on 2 cores). Skips
# (77, one line) only while the CLI does not know tree contracts (gt_common.sh gt_tree_known).
# Heavy (label `heavy`). Usage: gt_declared_premerge.sh CLI SRC WORK TOOLS
# The kernels run in process (--no-isolate): they are this project's own and cannot crash;
# the isolated path (a child per call, the operands' digests around it) is held by the
# smaller gt runs (sh_gt_declared, sh_gt_misdeclared) and the plugin tests, and here cost a
# third of the CPU (declared: 68 CPU s isolated, 43 in process; the same entries).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
gt_need_tree
cd "$SRC"
if [ "${A4W4_GT_FULL:-0}" = 1 ]; then
  gt_run true --set premerge --budget-seconds 10 --no-isolate
else
  gt_premerge_small "$WORK/premerge-small.csv"
  gt_run true --cases "$WORK/premerge-small.csv" --no-isolate
fi
