#!/usr/bin/env bash
# The whole pre-merge set with every output checked (`run --set premerge --budget-seconds 10`,
# golden bundles included) through every ground-truth kernel declaring its true tree contract
# (docs/contracts.md §4.2): exit 0, every kernel entry passes, every output judged. Skips
# (77, one line) only while the CLI does not know tree contracts (gt_common.sh gt_tree_known).
# Heavy (label `heavy`). Usage: gt_declared_premerge.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
set +e; gt_tree_known; known=$?; set -e
[ $known -eq 0 ] || exit $known
cd "$SRC"
set +e
"$CLI" run --set premerge --budget-seconds 10 --quiet --out "$WORK/out" \
  --backend "$(gt_backends "")" $(gt_overrides) > "$WORK/log" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { echo "gt_declared_premerge: exit $rc, expected 0: $(cat "$WORK/log")"; gt_judge "$WORK/out" true; exit 1; }
gt_judge "$WORK/out" true
