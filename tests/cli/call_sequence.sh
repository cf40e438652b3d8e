#!/usr/bin/env bash
# The call sequence (docs/backends.md "Call sequences", harness/engine/statecheck.c): every
# plugin is also called 5 times in one process on the run's smallest cases (A, A again, A with
# other operands, B, A again) and every call is judged, the run's calibration call too. A
# kernel caching its weights by N (gt-stalecache) and one wrong on its first call in a process
# (gt-firstcall, under --no-isolate where the calibration is that call) fail with an entry
# naming the call; before the sequence both passed. A correct plugin passes with the
# sequence's outputs counted, isolated and not; --resume and merge keep its entry; and
# --no-call-sequence is said in the verdict.
set -euo pipefail
CLI=$1 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$WORK"
P=$(dirname "$CLI")/plugins
fail() { echo "call_sequence: $*"; exit 1; }
for v in gt_stalecache gt_firstcall ref crash; do
  [ -f "$P/liba4w4_${v}_plugin.so" ] || fail "no $P/liba4w4_${v}_plugin.so"
done

# A = s3 (the smallest), B = s2 (another shape with A's N)
cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
s1,8,64,256,normal,1,
s2,8,32,256,normal,2,
s3,4,32,128,exact,3,
CSV

# run OUT PLUGIN EXPECTED_EXIT [options]
run() {
  local out=$1 plugin=$2 want=$3; shift 3
  set +e
  timeout 300 "$CLI" run --cases c.csv --no-golden --quiet --out "$out" \
    --backend "plugin:$P/liba4w4_${plugin}_plugin.so" "$@" > "$out.log" 2>&1
  local rc=$?
  set -e
  [ "$rc" = "$want" ] || { cat "$out.log"; fail "$out: exit $rc, expected $want"; }
}

# check DIR VERDICT SEQ_VERDICT NOTE_RE [REASON_RE]: results.json's facts
check() {
  python3 - "$@" <<'PY' || fail "$1: results.json does not say what it must (above)"
import json, re, sys
d, verdict, seq_verdict, note_re = sys.argv[1:5]
reason_re = sys.argv[5] if len(sys.argv) > 5 else ""
doc = json.load(open(d + "/results.json"))
bad = []
if doc["verdict"] != verdict: bad.append("verdict %s, not %s" % (doc["verdict"], verdict))
if reason_re and not re.search(reason_re, doc["verdict_reason"]):
    bad.append("verdict_reason: " + doc["verdict_reason"])
seq = [e for e in doc["cases"] if e["name"].endswith("/call-sequence")]
if seq_verdict == "none":
    if seq: bad.append("a call-sequence entry where none is due")
elif len(seq) != 1 or seq[0]["name"] != "s3/call-sequence":
    bad.append("call-sequence entries: %s" % [e["name"] for e in seq])
else:
    e = seq[0]
    if e["verdict"] != seq_verdict: bad.append("sequence verdict %s" % e["verdict"])
    if not re.search(note_re, e["note"]): bad.append("sequence note: " + e["note"])
    # 5 calls (4x32 three times, 8x32 once, 4x32 again) and the calibration's 4x64 sample
    if e["checked_outputs"] != 4 * 128 + 256 + 256:
        bad.append("sequence checked %s outputs" % e["checked_outputs"])
    if e["judged_bit_exact"] != e["checked_outputs"]:
        bad.append("judged_bit_exact %s" % e["judged_bit_exact"])
for e in doc["cases"]:
    if not e["name"].endswith("/call-sequence") and e["backend"] != "oracle" and e["verdict"] != "pass":
        bad.append("%s: %s (the plain entries pass: every call a first one)" % (e["name"], e["verdict"]))
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
}

# 1. weights cached by N: the third call (A's shape, other operands) reads A's weights
run stale gt_stalecache 1
check stale FAIL fail '^third call of 4x32x128 with other operands after 4x32x128 in one process \(call 3 of 5\): [0-9]+ of 128 outputs differ; 5 calls in one child process'
echo "stale cache: the sequence's third call fails, named"

# 2. without the sequence the same kernel passes, and the verdict says the sequence was off
run stale_off gt_stalecache 0 --no-call-sequence
check stale_off PASS none '' 'call sequence off \(--no-call-sequence\)'
grep -q "off (--no-call-sequence)" stale_off/results.json || fail "results.json has no call_sequence off"

# 3. wrong on the first call in a process: in-process, the run's calibration is that call
run first_inproc gt_firstcall 1 --no-isolate
check first_inproc FAIL fail "^the run's calibration call \(64x512x4096, a 4x64 sample, the process's first call\): 256 of 256 outputs differ"
echo "first call: the calibration call is judged and fails"

# 4. a correct plugin passes, the sequence's outputs counted; --resume keeps the entry
run ref ref 0
check ref PASS pass '^5 calls in one child process \(init once\): 4x32x128, 4x32x128, 4x32x128 with other operands, 8x32x256, 4x32x128 \(0 failed\)'
run ref ref 0 --resume
check ref PASS pass '^5 calls in one child process'
run ref_inproc ref 0 --no-isolate
check ref_inproc PASS pass '^5 calls in one process \(this one\)'

# 5. a crash inside the sequence (the crash plugin dies when M > 1: call 4, m2) fails the
# entry, "aborted": "crashed", naming the call; the call after it is not made
printf 'name,M,N,K,regime,seed,tags\nm1,1,32,64,normal,1,\nm2,2,32,64,normal,2,\n' > crash.csv
set +e
timeout 300 "$CLI" run --cases crash.csv --no-golden --quiet --out crash \
  --backend "plugin:$P/liba4w4_crash_plugin.so" > crash.log 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat crash.log; fail "crash: exit $rc, expected 1"; }
python3 - <<'PY' || fail "crash: the sequence entry does not say it (above)"
import json, re
e = [e for e in json.load(open("crash/results.json"))["cases"] if e["name"] == "m1/call-sequence"][0]
ok = e["verdict"] == "fail" and e.get("aborted") == "crashed" and re.search(
    r"^first call of 2x32x64 after 1x32x64 with other operands in one process \(call 4 of 5\): "
    r"plugin crash-plugin \(SIGSEGV when M > 1\) crashed: (SIGSEGV \(signal 11\)|exited 8[67])", e["note"])
print("" if ok else e)
raise SystemExit(0 if ok else 1)
PY

# 6. shards: the entry is recorded once, with A's item, and merge takes it
run sh1 ref 0 --shard 1/2
run sh2 ref 0 --shard 2/2
"$CLI" merge --out merged sh1 sh2 > merge.log 2>&1 || { cat merge.log; fail "merge: exit $?"; }
check merged PASS pass '^5 calls in one child process'

# 7. --save-failing saves the failing call's bundle (its operands, the outputs it returned and
# the contract's), verify shows the failure from that file alone, and the entry's repro line
# (the run narrowed to A and B) makes the same sequence fail again. Before: no bundle, no repro.
run stale_saved gt_stalecache 1 --save-failing saved
python3 - <<'PY' > seq_saved.txt || fail "stale_saved: the sequence entry names no saved bundle or repro"
import json
e = [e for e in json.load(open("stale_saved/results.json"))["cases"] if e["name"] == "s3/call-sequence"][0]
assert e.get("saved") == "s3-call-sequence-3@plugin_liba4w4_gt_stalecache_plugin.so", e.get("saved")
assert " --case s3 " in e["repro"] + " " and e["repro"].endswith(" --case s2"), e["repro"]
print(e["saved"]); print(e["repro"])
PY
item=$(sed -n 1p seq_saved.txt)
f=$(ls saved/"$item"* 2>/dev/null | head -1)
[ -n "$f" ] || { ls saved; fail "stale_saved: no file for $item in saved/"; }
set +e; "$CLI" verify "$f" > verify.log 2>&1; vrc=$?; set -e
[ "$vrc" = 1 ] || { cat verify.log; fail "verify $f: exit $vrc, expected 1 (the recorded failure shown again)"; }
repro=$(sed -n 2p seq_saved.txt | sed -e 's#--out build/repro#--out repro_out#' -e 's#^a4w4check #"$CLI" #')
set +e; (eval "$repro --quiet") > repro.log 2>&1; rrc=$?; set -e
[ "$rrc" = 1 ] || { cat repro.log; fail "the repro line ($repro): exit $rrc, expected 1"; }
python3 -c 'import json,sys; d=json.load(open("repro_out/results.json"))
sys.exit(0 if [e["verdict"] for e in d["cases"] if e["name"]=="s3/call-sequence"]==["fail"] else 1)' ||
  fail "the repro line does not make the sequence fail again"
echo "call_sequence: --save-failing keeps the failing call's bundle, the repro line fails again"
echo "call_sequence: ok"
