#!/usr/bin/env bash
# The CTest fixture gt_found: `discover` on the ordered(1) build of every ground-truth kernel of
# $GT_DISCOVERABLE at $GT_FOUND_SHAPE (gt_common.sh gt_discover_all), each contract written to
# $WORK/found/<kernel>.txt with its log, once for the three tests that judge by those files
# (discover_gt, which also holds each to its kernel's declared contract, discover_judged,
# gt_discovered_premerge; gt_common.sh gt_found_dir). Fails with one line when a discovery
# fails. Heavy (label `heavy`). Usage: gt_discover_found.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
gt_discover_all "$WORK/found" "$GT_FOUND_SHAPE"
echo "gt_discover_found: $(wc -w <<<"$GT_DISCOVERABLE") kernels discovered at $GT_FOUND_SHAPE"
