#!/usr/bin/env bash
# The whole pre-merge set (`run --set premerge`, golden bundles included) through every
# ground-truth kernel declared ordered(1) and the ordered(1) reference plugin: exit 1, every
# mis-declared kernel caught, nothing else failing; prints the cases that caught each kernel.
# Heavy (label `heavy`): minutes of plugin work. Usage: gt_misdeclared_premerge.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$SRC/tests/cli/gt/gt_common.sh"
B="$(gt_backends _mis),plugin:$GT_PLUGINS/liba4w4_ref_plugin.so"
cd "$SRC"
set +e
"$CLI" run --set premerge --quiet --out "$WORK/out" --backend "$B" > "$WORK/log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { echo "gt_misdeclared_premerge: exit $rc, expected 1: $(cat "$WORK/log")"; exit 1; }
gt_judge "$WORK/out" mis
