#!/usr/bin/env bash
# A pre-merge run produces all four formats: results.json valid against the versioned schema
# (checked independently with python3-jsonschema when installed, and by a4w4check itself),
# then `report --format all`: summary.md, report.html, junit.xml (valid against
# tests/data/report_junit.xsd with xmllint). Real runs of the edge set (with failures, and
# sharded then merged) validate too; malformed or invalid input exits 2 with one line.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3 TOOLS=$4
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
SCHEMA=reports/schema/results.schema.json
XSD=tests/data/report_junit.xsd
PLUGIN="$TOOLS/../plugins/liba4w4_bad_plugin.so"

# python with jsonschema: Debian's python3-jsonschema (ci/setup.sh) first
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import jsonschema' 2>/dev/null; then PY=$p; break; fi
done
validate() { # validate FILE: the schema itself is valid 2020-12, the file meets it
  if [ -n "$PY" ]; then
    "$PY" - "$SRC/$SCHEMA" "$1" <<'EOF'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
errors = sorted(Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))),
                key=lambda e: list(e.path))
for e in errors[:5]:
    print(f"{sys.argv[2]}: /{'/'.join(map(str, e.path))}: {e.message}")
sys.exit(1 if errors else 0)
EOF
  else
    echo "note: no python3 jsonschema module; schema checked by a4w4check's validator only"
  fi
}
junit_ok() {
  xmllint --noout --schema "$XSD" "$1" 2> "$WORK/xmllint.err" ||
    { cat "$WORK/xmllint.err"; echo "$1 is not valid JUnit XML"; exit 1; }
}
command -v xmllint >/dev/null || { echo "xmllint missing (Debian libxml2-utils; ci/setup.sh installs it)"; exit 1; }

# 1. the pre-merge run, all four formats: cli_run_premerge's run (the bare `run` of the main
# job; CTest fixture premerge_run runs it first), copied: a second whole pre-merge run here
# cost two and a half minutes
pre=$(dirname "$WORK")/run_premerge/out
[ -s "$pre/results.json" ] ||
  { echo "no pre-merge run in $pre (CTest runs cli_run_premerge first: fixture premerge_run)"; exit 1; }
cp -r "$pre" "$WORK/pre"
validate "$WORK/pre/results.json"
"$CLI" report "$WORK/pre/results.json" --format all --out "$WORK/pre/rep" 2> "$WORK/report.err"
for f in summary.md report.html junit.xml; do
  [ -s "$WORK/pre/rep/$f" ] || { echo "report did not write $f"; exit 1; }
  grep -q "$WORK/pre/rep/$f" "$WORK/report.err" || { echo "report did not list $f"; exit 1; }
done
[ "$(ls "$WORK/pre/rep" | wc -l)" -eq 3 ] || { echo "extra files: $(ls "$WORK/pre/rep")"; exit 1; }
junit_ok "$WORK/pre/rep/junit.xml"
grep -q 'Verdict: PASS' "$WORK/pre/rep/summary.md"
grep -qE '^	"verdict":	"PASS",$' "$WORK/pre/results.json"
items=$(($(grep -c '^[A-Za-z0-9]' cases/premerge.csv) - 1 + $(ls cases/golden/*.safetensors | wc -l)))
grep -q "^Completeness: $items of $items expected items recorded, [0-9]* outputs checked" "$WORK/pre/rep/summary.md"
grep -q '<property name="verdict" value="PASS"/>' "$WORK/pre/rep/junit.xml"
# a document written before the verdict was recorded still validates, and no renderer makes
# one up from its entries
grep -vE '^	"(verdict|verdict_reason)":' "$WORK/pre/results.json" |
  sed '/^	"counts":	{$/,/^	},$/d' > "$WORK/old.json"
! grep -q '"recorded_items"' "$WORK/old.json" || { echo "old.json still has counts"; exit 1; }
validate "$WORK/old.json"
"$CLI" report "$WORK/old.json" --format all --out "$WORK/old" --quiet
grep -q '^\*\*Verdict not recorded\*\*' "$WORK/old/summary.md"
grep -q '<title>a4w4check report: premerge - verdict not recorded</title>' "$WORK/old/report.html"
grep -q '<property name="verdict" value="verdict not recorded"/>' "$WORK/old/junit.xml"
! grep -q 'Verdict: PASS' "$WORK/old/summary.md" "$WORK/old/report.html"
grep -q '<title>a4w4check report: premerge - PASS</title>' "$WORK/pre/rep/report.html"
grep -q 'failures="0"' "$WORK/pre/rep/junit.xml"
entries=$(grep -cE '"verdict":[[:space:]]*"(pass|fail|n/a|skip)"' "$WORK/pre/results.json")
testcases=$(grep -c '<testcase ' "$WORK/pre/rep/junit.xml")
[ "$entries" -eq "$testcases" ] || { echo "$entries entries but $testcases testcases"; exit 1; }
cmp "$WORK/pre/summary.md" "$WORK/pre/rep/summary.md"   # run and report: one renderer
# premerge has layer groups and golden bundles; the hazard map has the fence and picks
grep -q 'layer N=1024 K=5120' "$WORK/pre/rep/summary.md"
grep -q 'golden bundles' "$WORK/pre/rep/summary.md"
grep -q 'Triton (N &#8804; 128)' "$WORK/pre/rep/report.html"
grep -q 'dispatch: heuristic -&gt; ASM' "$WORK/pre/rep/report.html"

# 2. a failing edge run: schema-valid, JUnit failures = failing entries
set +e
"$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "cpu-asm,plugin:$PLUGIN" --out "$WORK/bad" --quiet
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "bad plugin run: exit $rc, expected 1"; exit 1; }
validate "$WORK/bad/results.json"
"$CLI" report "$WORK/bad" --out "$WORK/bad/rep" --quiet        # a directory works too
junit_ok "$WORK/bad/rep/junit.xml"
fails=$(grep -cE '"verdict":[[:space:]]*"fail"' "$WORK/bad/results.json")
[ "$(grep -c '<failure ' "$WORK/bad/rep/junit.xml")" -eq "$fails" ]
grep -q "failures=\"$fails\"" "$WORK/bad/rep/junit.xml"
grep -q "## Failures ($fails)" "$WORK/bad/rep/summary.md"
grep -qE '^- `e_n128` on `plugin:.*: y\(0, 0\) got 0x[0-9a-f]{4} expected 0x[0-9a-f]{4}' "$WORK/bad/rep/summary.md"
# the XSD is not a rubber stamp
sed 's/<testcase name="[^"]*"/<testcase/' "$WORK/bad/rep/junit.xml" > "$WORK/broken.xml"
! xmllint --noout --schema "$XSD" "$WORK/broken.xml" 2>/dev/null || { echo "XSD accepted a testcase without a name"; exit 1; }

# 3. sharded and merged runs validate
for i in 1 2; do "$CLI" run --e8m0-code0 2^-127 --set edge --shard $i/2 --out "$WORK/s$i" --quiet; done
"$CLI" merge --out "$WORK/merged" "$WORK/s1" "$WORK/s2" 2>/dev/null
validate "$WORK/merged/results.json"
"$CLI" report "$WORK/merged/results.json" --format md --out - > "$WORK/merged.md"
grep -q 'Verdict: PASS' "$WORK/merged.md"
# a shard cut short, merged with --allow-partial: INCOMPLETE in every format, never PASS
head -n 4 "$WORK/s2/results.jsonl" > "$WORK/cut.jsonl"; mkdir -p "$WORK/s2cut"
mv "$WORK/cut.jsonl" "$WORK/s2cut/results.jsonl"
set +e; "$CLI" merge --allow-partial --out "$WORK/partial" "$WORK/s1" "$WORK/s2cut" 2> "$WORK/err"; rc=$?; set -e
[ "$rc" -eq 5 ] || { echo "merge --allow-partial of a cut shard: exit $rc, expected 5"; cat "$WORK/err"; exit 1; }
validate "$WORK/partial/results.json"
"$CLI" report "$WORK/partial" --format all --out "$WORK/partial/rep" --quiet
grep -q '^\*\*Verdict: INCOMPLETE\*\*' "$WORK/partial/rep/summary.md"
grep -q 'Verdict reason: [0-9]* of [0-9]* expected items recorded' "$WORK/partial/rep/summary.md"
grep -q '<title>a4w4check report: edge - INCOMPLETE</title>' "$WORK/partial/rep/report.html"
grep -q '<error type="incomplete"' "$WORK/partial/rep/junit.xml"
junit_ok "$WORK/partial/rep/junit.xml"

# 4. bad input: one line, exit 2, nothing written
expect2() { # expect2 PATTERN ARGS...
  local pat=$1; shift
  set +e; "$@" > "$WORK/out" 2> "$WORK/err"; local rc=$?; set -e
  [ "$rc" -eq 2 ] || { echo "exit $rc, expected 2: $*"; cat "$WORK/err"; exit 1; }
  [ "$(wc -l < "$WORK/err")" -eq 1 ] || { echo "error is not one line: $*"; cat "$WORK/err"; exit 1; }
  grep -q -- "$pat" "$WORK/err" || { echo "error lacks '$pat': $(cat "$WORK/err")"; exit 1; }
}
head -c 3000 "$WORK/pre/results.json" > "$WORK/trunc.json"
expect2 'trunc.json: malformed JSON near byte' "$CLI" report "$WORK/trunc.json" --out "$WORK/x1"
[ ! -e "$WORK/x1" ] || { echo "report wrote output for malformed input"; exit 1; }
sed '0,/"verdict":[[:space:]]*"pass"/s//"verdict": "maybe"/' "$WORK/pre/results.json" > "$WORK/enum.json"
expect2 "/cases/0/verdict: \"maybe\" is not one of" "$CLI" report "$WORK/enum.json" --out "$WORK/x2"
expect2 '\[case m1_n192_k1024 on oracle\]' "$CLI" report "$WORK/enum.json" --out "$WORK/x2"
sed 's/"got":[[:space:]]*"0x/"got": "1x/' "$WORK/bad/results.json" > "$WORK/hex.json"
expect2 'does not match the pattern' "$CLI" report "$WORK/hex.json" --out "$WORK/x3"
sed 's#"a4w4check-results/2"#"a4w4check-results/3"#' "$WORK/pre/results.json" > "$WORK/v3.json"
expect2 "schema 'a4w4check-results/3' is not supported" "$CLI" report "$WORK/v3.json" --out "$WORK/x4"
grep -v '"checked_outputs"' "$WORK/pre/results.json" > "$WORK/missing.json"
expect2 "required field 'checked_outputs' is missing" "$CLI" report "$WORK/missing.json" --out "$WORK/x5"
expect2 'cannot read' "$CLI" report "$WORK/nope.json"
expect2 "is not one of md, html, junit, all" "$CLI" report "$WORK/pre/results.json" --format pdf
expect2 "writes one format" "$CLI" report "$WORK/pre/results.json" --out -
if [ -n "$PY" ]; then   # python3-jsonschema agrees that the crafted files are invalid
  for f in enum hex missing v2; do
    ! validate "$WORK/$f.json" > /dev/null || { echo "jsonschema accepted $f.json"; exit 1; }
  done
fi
echo "report formats ok"
