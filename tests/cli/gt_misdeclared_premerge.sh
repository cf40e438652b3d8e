#!/usr/bin/env bash
# The whole pre-merge set (`run --set premerge`, golden bundles included) through every
# ground-truth kernel declared ordered(1) and the ordered(1) reference plugin: exit 1, every
# mis-declared kernel caught, nothing else failing; prints the cases that caught each kernel.
# Heavy (label `heavy`): minutes of plugin work. Usage: gt_misdeclared_premerge.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
cd "$SRC"
gt_run mis --set premerge
