#!/usr/bin/env bash
# The Markdown report is pinned: tests/data/report_small_results.json (a fixed small run:
# tests/data/report_cases.csv on cpu-asm and the bad plugin, which is one ULP off in row 0)
# must render with --reproducible to exactly tests/data/report_small_summary.md. A live run
# of the same matrix must render reproducibly (two runs, same bytes in every format) and
# with the same entries and verdicts as the pinned one.
# A4W4_UPDATE_GOLDEN=1 re-pins both files from the live run (review the diff).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$WORK"   # relative paths only: the names recorded in results.json stay the same
cp "$SRC/tests/data/report_cases.csv" cases.csv
PLUGIN=../../plugins/liba4w4_bad_plugin.so   # from <build>/cli-work/sh_report_golden
[ -f "$PLUGIN" ] || { echo "missing $PLUGIN (build the tests/plugins targets)"; exit 1; }

for r in a b; do
  set +e
  "$CLI" run --cases cases.csv --no-golden --backend "cpu-asm,plugin:$PLUGIN" --out "run_$r" --quiet
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || { echo "run $r: exit $rc, expected 1 (the bad plugin fails)"; exit 1; }
  "$CLI" report "run_$r" --reproducible --out "rep_$r" --quiet
done
for f in summary.md report.html junit.xml; do
  cmp "rep_a/$f" "rep_b/$f" || { echo "--reproducible $f differs between two identical runs"; exit 1; }
done
# without --reproducible the timings are there
"$CLI" report run_a --format md --out - > timed.md
grep -q '| time ms |' timed.md
! grep -q '| time ms |' rep_a/summary.md
# run's own summary.md is the same renderer
cmp run_a/summary.md timed.md || { echo "run's summary.md differs from report --format md"; exit 1; }

if [ "${A4W4_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp run_a/results.json "$SRC/tests/data/report_small_results.json"
  "$CLI" report "$SRC/tests/data/report_small_results.json" --reproducible --format md --out - \
    > "$SRC/tests/data/report_small_summary.md"
  echo "re-pinned tests/data/report_small_results.json and report_small_summary.md"
fi

"$CLI" report "$SRC/tests/data/report_small_results.json" --reproducible --format md --out - > golden.md
diff -u "$SRC/tests/data/report_small_summary.md" golden.md ||
  { echo "the Markdown rendering changed: review, then A4W4_UPDATE_GOLDEN=1 ctest -R report_golden"; exit 1; }

# the live run has the pinned run's entries and verdicts (values may move with the generator)
key() { grep -oE '"(name|backend|verdict)":[[:space:]]*"[^"]*"' "$1" | tr -d '\t ' | paste - - - ; }
diff <(key "$SRC/tests/data/report_small_results.json") <(key run_a/results.json) ||
  { echo "the fixed run's entries or verdicts changed: re-pin with A4W4_UPDATE_GOLDEN=1"; exit 1; }
echo "golden ok"
