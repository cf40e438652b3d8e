#!/usr/bin/env bash
# A bounded(S) GPU backend is judged on every output, not on the host sample (a4w4check_cpu,
# the CPU stand-ins): one case of 17x1024x4096 (above 2^26 multiply-adds, so the run samples
# it: 776 of 17,408 outputs) through hip-mma-atomic (held to bounded(4); it declares atomic(4),
# contracts §4.1) with one output off the sample written far
# outside the bound (A4W4_GPU_CPU_FAULT=atomic-one). On the device path the entry judges all
# 17,408 outputs within the bound and fails on that one (exit 1), and so does hip-asm-atomic
# held to bounded(8) in the same run (the judge holds the limits of one S, 8 here; the other
# S's come from the C oracles' fast form on the host); with --host-judge only the
# sample is judged and the fault passes, which shows the case's sample misses it. The limits
# come from the device judge, held to the C oracles' on the sample: a judge whose bound is
# twice too lenient (A4W4_JUDGE_CPU_FAULT=2) fails the case's oracle entry (exit 1; a small
# case).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
printf 'name,M,N,K,regime,seed,tags\nbig,17,1024,4096,normal,11,bounded\n' >"$WORK/c.csv"
printf 'name,M,N,K,regime,seed,tags\nsmall,8,256,512,normal,12,bounded\n' >"$WORK/small.csv"
run() { # out extra-args; prints the exit status (CASES: the case file)
  set +e
  A4W4_GPU_CPU_FAULT=${A4W4_GPU_CPU_FAULT:-atomic-one} "$CLI" run --e8m0-code0 2^-127 --cases "${CASES:-$WORK/c.csv}" \
    --no-golden --budget-seconds 0 --backend "${BACKENDS:-hip-mma-atomic}" \
    --contract 'hip-mma-atomic=bounded(4)' --out "$WORK/$1" --quiet "${@:2}" \
    >"$WORK/$1.log" 2>&1
  echo $?
  set -e
}
rc=$(CASES=$WORK/small.csv A4W4_GPU_CPU_FAULT=none A4W4_JUDGE_CPU_FAULT=2 run lenient)
[ "$rc" = 1 ] && grep -q "THE GPU JUDGE DISAGREES WITH THE C ORACLES.*bounded(S) limits" \
  "$WORK/lenient/results.json" ||
  { cat "$WORK/lenient.log"; echo "a lenient judge's bound: exit $rc, expected 1 and the note"; exit 1; }
rc=$(BACKENDS=hip-mma-atomic,hip-asm-atomic run dev --contract 'hip-asm-atomic=bounded(8)')
[ "$rc" = 1 ] || { cat "$WORK/dev.log"; echo "device path: exit $rc, expected 1 (the fault)"; exit 1; }
rc=$(run host --host-judge)
[ "$rc" = 0 ] || { cat "$WORK/host.log"; echo "host sample: exit $rc, expected 0"; exit 1; }
python3 - "$WORK/dev/results.json" "$WORK/host/results.json" <<'PY'
import json, sys
def entry(p, b="hip-mma-atomic"):
    d = json.load(open(p))
    return [e for e in d["cases"] if e["backend"] == b][0]
dev, host = entry(sys.argv[1]), entry(sys.argv[2])
for e in (dev, entry(sys.argv[1], "hip-asm-atomic")):
    assert e["verdict"] == "fail" and e["mismatches"] == 1, e
    assert e["judged_in_bound"] == 17 * 1024, "device path judged %s outputs" % e["judged_in_bound"]
assert host["verdict"] == "pass" and host["judged_in_bound"] < 17 * 1024, host
print("bounded: %d outputs judged on the device path (fault found), %d on the host sample"
      % (dev["judged_in_bound"], host["judged_in_bound"]))
PY
echo "bounded GPU entry judged on every output: PASS"
