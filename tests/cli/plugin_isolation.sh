#!/usr/bin/env bash
# Plugins run isolated (harness/engine/isolate.c, harness/backends/plugin.c): a plugin that
# crashes on some cases fails exactly those entries, naming the signal, in the entry and in
# the verdict line; the other cases and the other backend of the run are all recorded; --resume
# of that directory neither crashes nor re-runs the recorded entry, and continues past it; a
# plugin that hangs is killed after --timeout and its entry fails "timed out after 2 s"; a
# plugin whose query crashes is refused with one line (exit 2); a good plugin still passes
# bit-exact; a run cut short leaves no earlier run's verdict in its --out; a crash on a sampled
# call says y held only the requested outputs. Sanitizer builds (UBSan's null check exits 86, ASan's SEGV handler 87, each with
# its report, instead of dying of the signal) are accepted.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$WORK"
P=$(dirname "$CLI")/plugins
fail() { echo "plugin_isolation: $*"; exit 1; }
for v in ref crash hang qcrash; do [ -f "$P/liba4w4_${v}_plugin.so" ] || fail "no $P/liba4w4_${v}_plugin.so"; done

libs=$(ldd "$CLI" 2>&1) || fail "ldd $CLI: exit $?" # read whole (no ldd | grep -q: pipefail race)
case $libs in
  *libasan*|*libubsan*) sanitized=1 crash_re='SIGSEGV \(signal 11\)|exited 8[67] \(sanitizer report\?\)' ;;
  *) sanitized=0 crash_re='SIGSEGV \(signal 11\)' ;;
esac

cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
m1a,1,32,64,normal,1,
m2,2,32,64,normal,2,
m1b,1,64,128,normal,3,
CSV

# run OUT PLUGIN [options]: exit code into rc (the run must end by itself: timeout 300)
run() {
  local out=$1 plugin=$2; shift 2
  set +e
  timeout 300 "$CLI" run --cases c.csv --no-golden --quiet --out "$out" \
    --backend "cpu-fallback,plugin:$P/liba4w4_${plugin}_plugin.so" "$@" > "$out.log" 2>&1
  rc=$?
  set -e
}

# check DIR PLUGIN ABORTED NOTE_RE: the doc's facts (python3 reads results.json)
check() {
  python3 - "$@" <<'PY' || fail "$1: results.json does not say what it must (above)"
import json, re, sys
d, plugin, aborted, note_re = sys.argv[1:5]
doc = json.load(open(d + "/results.json"))
by = {(e["name"], e["backend"]): e for e in doc["cases"]}
pb = next(b for b in doc["backends"] if b.startswith("plugin:"))
bad = []
if doc["verdict"] != "FAIL": bad.append("verdict %s, not FAIL" % doc["verdict"])
if not re.search("1 entry crashed or timed out \\(first: m2 on " + re.escape(pb) + ": .*(" + note_re + ")", doc["verdict_reason"]):
    bad.append("verdict_reason does not name the aborted entry: " + doc["verdict_reason"])
for n in ("m1a", "m2", "m1b"):
    c = by.get((n, "cpu-fallback"))
    if not c or c["verdict"] != "pass": bad.append("cpu-fallback %s: %s" % (n, c and c["verdict"]))
    e = by.get((n, pb))
    if not e: bad.append("no plugin entry for " + n); continue
    if n == "m2":
        if e["verdict"] != "fail" or e.get("aborted") != aborted or not re.search(note_re, e.get("note", "")):
            bad.append("m2: verdict %s aborted %s note %r" % (e["verdict"], e.get("aborted"), e.get("note")))
    elif e["verdict"] != "pass" or e.get("aborted"):
        bad.append("%s: verdict %s (the plugin's other cases must pass)" % (n, e["verdict"]))
if doc["counts"]["recorded_items"] != 3: bad.append("recorded_items %s" % doc["counts"]["recorded_items"])
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
}

# 1. a crash on the M > 1 case (the call sequence, which would also call m2 and crash, is off
# here: tests/cli/call_sequence.sh checks a crash inside it)
run crash crash --no-call-sequence
[ "$rc" = 1 ] || { cat crash.log; fail "crash plugin: exit $rc, expected 1"; }
check crash crash crashed "$crash_re"
grep -Eq "Verdict reason: .*1 entry crashed or timed out \(first: m2 on .*($crash_re)" crash/summary.md ||
  fail "summary.md's verdict reason does not name the crash"
# the crashed entry compared no output, and every line that shows it says so: never "0 of 0"
grep -q "FAIL m2 on .*: no output compared (crashed)" crash.log || { cat crash.log; fail "the closing line of the crashed entry"; }
grep -q "no output compared (crashed)" crash/summary.md || fail "summary.md does not say the crash compared nothing"
if grep -q "0 of 0" crash.log crash/summary.md; then fail "a crashed entry reads '0 of 0 checked'"; fi
echo "crash: entry failed, signal named, the rest recorded"
# a crash on a sampled call says y held only the requested outputs (a kernel that writes the
# whole [M, N] into y crashes there); a call of every output (m2 above) says nothing of it
grep -q "a sampled call" crash/results.json && fail "m2 (every output) is called a sampled call"
printf 'name,M,N,K,regime,seed,tags\nbig,512,512,512,normal,5,\n' > sampled.csv
set +e
timeout 300 "$CLI" run --cases sampled.csv --no-golden --quiet --out sampled --budget-seconds 0 \
  --no-call-sequence --backend "plugin:$P/liba4w4_crash_plugin.so" > sampled.log 2>&1; rc=$?
set -e
[ "$rc" = 1 ] || { cat sampled.log; fail "crash on a sampled call: exit $rc, expected 1"; }
grep -Eq "a sampled call: y held the [0-9]+ x [0-9]+ outputs of rows\[\] x cols\[\], not \[512, 512\]" \
  sampled/results.json || fail "the crash on a sampled call does not say y held the sample: $(grep -m1 FAIL sampled.log)"
echo "crash on a sampled call: the note says what y held"

# 2. --resume of the finished directory: no crash, nothing re-run
before=$(md5sum < crash/results.jsonl)
run crash crash --resume --no-call-sequence
[ "$rc" = 1 ] || { cat crash.log; fail "resume: exit $rc, expected 1"; }
[ "$(md5sum < crash/results.jsonl)" = "$before" ] || fail "resume re-ran recorded cases"
check crash crash crashed "$crash_re"
# ... and of a directory cut after the crashed case: continues past it
head -n 3 crash/results.jsonl > cut.jsonl && mv cut.jsonl crash/results.jsonl
rm -f crash/results.json
run crash crash --resume --no-call-sequence
[ "$rc" = 1 ] || { cat crash.log; fail "resume after the cut: exit $rc, expected 1"; }
[ "$(wc -l < crash/results.jsonl)" = 4 ] || fail "resume after the cut: $(wc -l < crash/results.jsonl) lines"
check crash crash crashed "$crash_re"
echo "resume: recorded crash kept, run continued past it"

# 3. a hang, killed by --timeout 2
run hang hang --timeout 2 --no-call-sequence
[ "$rc" = 1 ] || { cat hang.log; fail "hang plugin: exit $rc, expected 1"; }
check hang hang "timed out" "timed out after 2 s"
echo "hang: entry failed after 2 s, the rest recorded"

# 4. a query that crashes: the backend is refused, the harness lives
run qcrash qcrash
[ "$rc" = 2 ] || { cat qcrash.log; fail "qcrash plugin: exit $rc, expected 2"; }
# (a sanitizer's report of the child's crash comes first on the shared stderr)
[ "$sanitized" = 1 ] || [ "$(wc -l < qcrash.log)" = 1 ] || { cat qcrash.log; fail "qcrash: not one line"; }
tail -n 1 qcrash.log | grep -Eq "^a4w4check: run: plugin .*liba4w4_qcrash_plugin.so: loading crashed: ($crash_re)$" ||
  { cat qcrash.log; fail "qcrash: the last line names no crash"; }
[ ! -e qcrash/results.json ] || fail "qcrash: results.json written"
echo "qcrash: refused with one line"

# 5. the good plugin still passes bit-exact, isolated and not
for mode in "" --no-isolate; do
  run "ref$mode" ref $mode
  [ "$rc" = 0 ] || { cat "ref$mode.log"; fail "ref plugin ${mode:-isolated}: exit $rc"; }
  python3 - "ref$mode" <<'PY' || fail "ref plugin: entries not bit-exact"
import json, sys
doc = json.load(open(sys.argv[1] + "/results.json"))
es = [e for e in doc["cases"] if e["backend"].startswith("plugin:")]  # + m1a/call-sequence
assert len(es) == 4 and all(e["verdict"] == "pass" and e["mismatches"] == 0 and e["max_ulp"] == 0 for e in es), es
PY
done
echo "ref: bit-exact, isolated and in-process"

# 5b. a run cut short (here the crash plugin in-process takes the harness down at m2) into the
# directory of that PASS leaves its own results.jsonl and no earlier verdict beside it: before,
# the PASS summary.md and results.json of the other run stayed there (--budget-seconds 0: no
# calibration call, which would crash before the run starts its stream)
run "ref--no-isolate" crash --no-isolate --no-call-sequence --budget-seconds 0
[ "$rc" != 0 ] && [ "$rc" != 1 ] || { cat "ref--no-isolate.log"; fail "in-process crash: exit $rc"; }
[ ! -e ref--no-isolate/summary.md ] && [ ! -e ref--no-isolate/results.json ] ||
  fail "a run cut short left the earlier run's summary.md or results.json: $(grep -m1 Verdict ref--no-isolate/summary.md)"
grep -q '"case":"m1a"' ref--no-isolate/results.jsonl || fail "the cut run's recorded case is lost"
echo "cut run: no earlier verdict beside its results"

# 6. --timeout takes seconds >= 0
set +e
"$CLI" run --cases c.csv --timeout -1 > neg.log 2>&1; r1=$?
"$CLI" run --cases c.csv --timeout soon > word.log 2>&1; r2=$?
set -e
[ "$r1" = 2 ] && [ "$r2" = 2 ] || fail "--timeout -1 / soon: exit $r1 / $r2, expected 2"
grep -q -- "--timeout" neg.log || { cat neg.log; fail "--timeout -1: the line names no option"; }
# --timeout is enforced only on isolated plugins: with --no-isolate it is refused, one line
set +e
"$CLI" run --cases c.csv --no-isolate --timeout 2 > ni.log 2>&1; r3=$?
set -e
[ "$r3" = 2 ] && [ "$(wc -l < ni.log)" -eq 1 ] && grep -q -- "--timeout 2 with --no-isolate" ni.log ||
  { cat ni.log; fail "--no-isolate --timeout 2: exit $r3, expected 2 and one line"; }
echo "plugin isolation ok"
