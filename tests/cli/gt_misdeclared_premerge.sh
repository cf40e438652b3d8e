#!/usr/bin/env bash
# The pre-merge set (a representative slice of its cases up to 2^30 MACs, gt_premerge_small;
# the whole set with A4W4_GT_FULL=1, label `wholeset`; golden bundles included) through every
# ground-truth kernel declared ordered(1) and the ordered(1) reference plugin: exit 1, every
# mis-declared kernel caught, nothing else failing; prints the cases that caught each kernel.
# Heavy (label `heavy`): minutes of plugin work. Usage: gt_misdeclared_premerge.sh CLI SRC WORK TOOLS
# The kernels run in process (--no-isolate): they are this project's own and cannot crash;
# the isolated path (a child per call, the operands' digests around it) is held by the
# smaller gt runs (sh_gt_declared, sh_gt_misdeclared) and the plugin tests, and here cost a
# third of the CPU (declared: 68 CPU s isolated, 43 in process; the same entries).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
cd "$SRC"
if [ "${A4W4_GT_FULL:-0}" = 1 ]; then
  gt_run mis --set premerge --no-isolate
else
  gt_premerge_small "$WORK/premerge-small.csv"
  # every output computed in full kept (run --keep-outputs) for gt_discovered_premerge, which
  # judges the same builds' outputs on its smaller slice under the discovered contracts (the
  # CTest fixture gt_mis_kept, gt_common.sh gt_kept_dir)
  gt_run mis --cases "$WORK/premerge-small.csv" --no-isolate --keep-outputs "$WORK/kept"
fi
