#!/usr/bin/env bash
# A bounded(S) GPU backend is judged where its outputs are (a4w4check_cpu, the CPU stand-ins):
# one sampled case of 256x640x512 (163,840 outputs, above 2^26 multiply-adds; M % 256 == 0 and
# K % 256 == 0, so no pad variant) through hip-mma-atomic held to bounded(4) (it declares
# atomic(4), contracts §4.1), judged on every output. The bytes
# the judge's stand-in copies back to the host (A4W4_JUDGE_CPU_COPIED: gathers and downloads)
# must stay below one copy of the outputs (2 bytes each): only the sample comes back for the C
# oracles' re-check, and the entry's verdict (counts, first mismatches, the bound's use and
# median) is computed on the device. Then the same with the bound broken at one output off the
# sample (A4W4_GPU_CPU_FAULT=atomic-one): the entry fails on it, its first mismatch recorded.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
printf 'name,M,N,K,regime,seed,tags\nwide,256,640,512,normal,21,bounded\n' >"$WORK/c.csv"
run() { # out fault; prints the exit status
  set +e
  A4W4_GPU_CPU_FAULT=$2 A4W4_JUDGE_CPU_COPIED="$WORK/$1.copied" "$CLI" run --e8m0-code0 2^-127 \
    --cases "$WORK/c.csv" --no-golden --budget-seconds 0 --backend hip-mma-atomic \
    --contract 'hip-mma-atomic=bounded(4)' --out "$WORK/$1" --quiet >"$WORK/$1.log" 2>&1
  echo $?
  set -e
}
rc=$(run ok none)
[ "$rc" = 0 ] || { cat "$WORK/ok.log"; echo "clean run: exit $rc, expected 0"; exit 1; }
outputs=$((256 * 640))
copied=$(cat "$WORK/ok.copied")
[ "$copied" -lt $((outputs * 2)) ] ||
  { echo "$copied bytes copied back for $outputs outputs: the outputs came back"; exit 1; }
rc=$(run bad atomic-one)
[ "$rc" = 1 ] || { cat "$WORK/bad.log"; echo "fault: exit $rc, expected 1"; exit 1; }
python3 - "$WORK/ok/results.json" "$WORK/bad/results.json" "$outputs" <<'PY'
import json, sys
def entry(p):
    return [e for e in json.load(open(p))["cases"] if e["backend"] == "hip-mma-atomic"][0]
ok, bad, n = entry(sys.argv[1]), entry(sys.argv[2]), int(sys.argv[3])
assert ok["verdict"] == "pass" and ok["judged_in_bound"] == n, ok
assert ok["bound_ulp_median"] > 0 and ok["bound_use"] > 0, ok
assert bad["verdict"] == "fail" and bad["mismatches"] == 1 and bad["judged_in_bound"] == n, bad
print("bounded entry judged on the device: %d outputs, pass, then 1 mismatch found" % n)
PY
echo "copied back: $copied bytes for $outputs outputs"
echo "compact bounded verdict on the CPU stand-ins: PASS"
