#!/usr/bin/env bash
# What README.md and docs/ state about the tool, held to the tool:
#   - README.md's exit-code table lists every code of harness/cli/a4w4check.h, each once;
#   - the pre-merge row of docs/cases.md gives the case count of cases/premerge.csv and the
#     golden bundles under cases/golden/, and their sum is the item count `run` prints;
#   - the length README.md gives examples/plugin/my_gemm.c ("(N lines;") is the file's;
#   - a console transcript of README.md or a command's page (docs/cli/) shows standard output
#     only: no line of standard error ("a4w4check: ..." or "a4w4check <command>: ...") among a
#     command's output lines. (docs/forensics.md shows what a failing run prints on standard
#     error on purpose; tests/cli/forensics_walk.sh holds those lines.)
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
fail() { echo "readme_facts: $*"; exit 1; }

# exit codes
codes=$(sed -n 's/^ *A4W4_EXIT_[A-Z]* = \([0-9]*\).*/\1/p' harness/cli/a4w4check.h | sort -n | tr '\n' ' ')
table=$(sed -n '/^| exit code | meaning |$/,/^$/s/^| \([0-9]*\) | .*/\1/p' README.md | sort -n | tr '\n' ' ')
[ -n "$codes" ] && [ "$codes" = "$table" ] ||
  fail "README's exit-code table has codes '$table', harness/cli/a4w4check.h '$codes'"

# the pre-merge row
cases=$(($(grep -c '^[A-Za-z0-9]' cases/premerge.csv) - 1))   # minus the header
bundles=$(find cases/golden -maxdepth 1 -name '*.safetensors' | wc -l)
row=$(grep '^| `premerge` (default) |' docs/cases.md) || fail "no premerge row in docs/cases.md"
[[ "$row" == "| \`premerge\` (default) | $cases (+ $bundles golden bundles: \`run\` reports $((cases + bundles)) items) |"* ]] ||
  fail "premerge row: '$row'; the files give $cases cases + $bundles golden bundles"
# the items run prints: the progress line's total (a shard of one item is enough to see it)
set +e
"$CLI" run --shard 1/$((cases + bundles)) --backend cpu-fallback --out "$WORK/o" > "$WORK/out" 2> "$WORK/err"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "run --shard 1/$((cases + bundles)): exit $rc: $(tail -n 3 "$WORK/err")"
grep -q "\"matrix_items\":	$((cases + bundles))," "$WORK/o/results.json" ||
  fail "run's matrix_items is not $((cases + bundles))"

# the plugin example's length
said=$(sed -n 's/^(\([0-9]*\) lines; put your kernel in .*/\1/p' README.md)
lines=$(wc -l < examples/plugin/my_gemm.c)
[ "$said" = "$lines" ] || fail "README gives my_gemm.c '$said' lines, the file has $lines"

# console transcripts: no standard-error line among standard-output lines
awk '/^```console/ {inblock = 1; next} /^```/ {inblock = 0}
     inblock && /^a4w4check( [a-z]+)?: / {print FILENAME ":" FNR ": " $0; bad = 1}
     END {exit bad}' README.md docs/cli/*.md ||
  fail "a console block shows a standard-error line among the output"
echo "README facts ok"
