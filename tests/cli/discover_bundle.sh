#!/usr/bin/env bash
# `a4w4check discover` on a kernel outside this process, through operand and output bundles
# (contracts §4.4): a numpy kernel keeping ordered(1) (python/tests/helpers.py) run by
# `python3 -m a4w4check.external`. One command (--runner) finds ordered(1); the manual flow
# (--write-probes, the runner, --probes) stops with exit 5 and what to run while a round's
# outputs are missing, then finds the same; outputs of other probes are refused (exit 2).
# Needs /usr/bin/python3 with numpy (ci/setup.sh). Usage: discover_bundle.sh CLI SRC WORK TOOLS
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3 TOOLS=$4
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
fail() { echo "discover_bundle: $*"; exit 1; }
export PYTHONPATH="$SRC/python:$SRC/python/tests"
RUNNER="/usr/bin/python3 -m a4w4check.external --kernel helpers:ordered1_gemm --device cpu"
SHAPE=24x8x512

"$CLI" discover --backend bundle:out --probes probes --runner "$RUNNER" --shapes $SHAPE \
  --out auto.txt --quiet --no-evidence > auto.log 2>&1 || fail "--runner: exit $? ($(cat auto.log))"
[ "$("$TOOLS/contract_text" --file auto.txt)" = "ordered(1)" ] || fail "--runner: $(cat auto.txt)"
[ -f probes/discover.json ] && [ -f probes/r1/manifest.json ] && [ -f out/r1/manifest.json ] \
  || fail "--runner: probe or output directories missing"

"$CLI" discover --write-probes m --shapes $SHAPE > w.log 2>&1 || fail "--write-probes: exit $? ($(cat w.log))"
grep -q "m/r1" w.log || fail "--write-probes does not say where the probes are: $(cat w.log)"
round=1
while :; do
  set +e
  "$CLI" discover --backend bundle:mo --probes m --out manual.txt --quiet --no-evidence > p.log 2>&1
  rc=$?
  set -e
  [ $rc -eq 0 ] && break
  [ $rc -eq 5 ] || fail "--probes round $round: exit $rc, expected 5 or 0: $(cat p.log)"
  grep -q "run the kernel on them into mo/r$round" p.log || fail "round $round: no instruction: $(cat p.log)"
  [ -f "m/r$round/manifest.json" ] || fail "round $round's probes were not written"
  [ ! -e manual.txt ] || fail "a contract was written before the last round"
  $RUNNER --ops "m/r$round" --out "mo/r$round" > /dev/null 2>&1 || fail "runner on round $round"
  round=$((round + 1))
  [ $round -le 5 ] || fail "more than 4 rounds"
done
[ "$("$TOOLS/contract_text" --file manual.txt)" = "ordered(1)" ] || fail "manual flow: $(cat manual.txt)"
cmp -s <(grep -v '^#' auto.txt) <(grep -v '^#' manual.txt) || fail "the two flows disagree"

# outputs computed for another probe set (another seed) are refused
"$CLI" discover --write-probes m2 --shapes $SHAPE --seed 9 > /dev/null 2>&1
set +e
"$CLI" discover --backend bundle:mo --probes m2 --out other.txt --quiet --no-evidence > o.log 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "outputs of other probes: exit $rc, expected 2: $(cat o.log)"
grep -q "other operands\|matrix_hash" o.log || fail "outputs of other probes: $(cat o.log)"
echo "discover_bundle: ordered(1) through --runner and through the manual rounds ($round rounds)"
