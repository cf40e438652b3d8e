#!/usr/bin/env bash
# A case the host checks in full (--full, or the budget) on the device path (a4w4check_cpu, the
# CPU stand-ins): the host backend (cpu-fallback) is judged on every output on the host, while
# the device entries and the C oracles' re-check of the judge keep the case's own sample, as
# without --full (docs/architecture.md "Judging on the device"): the device compares every
# output itself, so its outputs and the judge's values do not all come back. One case of
# 256x640x512 (163,840 outputs, above 2^26 multiply-adds, no pad variant) through
# hip-mma-32x128 (ordered(1)), hip-mma-atomic (atomic(4)) and cpu-fallback, with and without
# --full: the bytes the judge's stand-in copies back (A4W4_JUDGE_CPU_COPIED) stay below one
# copy of the outputs with --full too, the device entries' re-check covers the same sample
# (the oracle entry's note), cpu-fallback checks 163,840 outputs with --full. Then the judge's
# mutant (A4W4_JUDGE_CPU_FAULT=1) with --full: the re-check on the sample still kills it.
# Without --full and without cpu-fallback, under the default budget, the host's oracles cover
# the sample alone (the budget buys no full host check when the device judges every entry).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
printf 'name,M,N,K,regime,seed,tags\nfullhost,256,640,512,normal,23,full\n' >"$WORK/c.csv"
run() { # out judge-fault [run options]; prints the exit status
  local out=$1 fault=$2
  shift 2
  set +e
  A4W4_JUDGE_CPU_FAULT=$fault A4W4_JUDGE_CPU_COPIED="$WORK/$out.copied" "$CLI" run \
    --e8m0-code0 2^-127 --cases "$WORK/c.csv" --no-golden --budget-seconds 0 \
    --backend hip-mma-32x128,hip-mma-atomic,cpu-fallback --out "$WORK/$out" --quiet "$@" \
    >"$WORK/$out.log" 2>&1
  echo $?
  set -e
}
for out in sampled full; do
  opt=(); [ "$out" = full ] && opt=(--full)
  rc=$(run "$out" 0 "${opt[@]}")
  [ "$rc" = 0 ] || { cat "$WORK/$out.log"; echo "$out: exit $rc, expected 0"; exit 1; }
done
outputs=$((256 * 640))
copied=$(cat "$WORK/full.copied")
[ "$copied" -lt $((outputs * 2)) ] ||
  { echo "--full: $copied bytes copied back for $outputs outputs: the outputs came back"; exit 1; }
python3 - "$WORK/sampled/results.json" "$WORK/full/results.json" "$outputs" <<'PY'
import json, re, sys
def entries(p):
    return {e["backend"]: e for e in json.load(open(p))["cases"]}
s, f, n = entries(sys.argv[1]), entries(sys.argv[2]), int(sys.argv[3])
def rechecked(e):
    m = re.search(r"(\d+) sampled outputs re-checked by the C oracles", e["note"])
    assert m, e["note"]
    return int(m.group(1))
assert f["cpu-fallback"]["checked_outputs"] == n and not f["cpu-fallback"]["sampled"], f
assert s["cpu-fallback"]["checked_outputs"] < n and s["cpu-fallback"]["sampled"], s
k = rechecked(s["oracle"])
assert 0 < rechecked(f["oracle"]) == k < n, (f["oracle"]["note"], k)
for b in ("hip-mma-32x128", "hip-mma-atomic"):
    assert f[b]["verdict"] == "pass" and f[b]["checked_outputs"] == n, f[b]
print("--full: cpu-fallback on %d outputs, the device path re-checked on %d" % (n, k))
PY
# the budget (60 s by default) buys no full host check of a case whose every entry the device
# judges: the host's oracles cover the sample alone
set +e
"$CLI" run --e8m0-code0 2^-127 --cases "$WORK/c.csv" --no-golden --backend hip-mma-32x128,hip-mma-atomic \
  --out "$WORK/budget" --quiet >"$WORK/budget.log" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || { cat "$WORK/budget.log"; echo "device-only run under the budget: exit $rc"; exit 1; }
python3 - "$WORK/budget/results.json" "$WORK/sampled/results.json" <<'PY'
import json, sys
b, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ob = [e for e in b["cases"] if e["backend"] == "oracle"][0]
os_ = [e for e in s["cases"] if e["backend"] == "oracle"][0]
assert ob["note"] == os_["note"], (ob["note"], os_["note"])
assert b["stages"]["oracle_outputs"] == s["stages"]["oracle_outputs"] < 256 * 640, b["stages"]
assert b["budget"]["cases_device"] == 1 and b["budget"]["cases_full"] == 0, b["budget"]
print("device-only under the budget: host oracles on %d outputs" % b["stages"]["oracle_outputs"])
PY
rc=$(run mut 1 --full)
[ "$rc" = 1 ] || { cat "$WORK/mut.log"; echo "judge mutant with --full: exit $rc, expected 1"; exit 1; }
grep -q "THE GPU JUDGE DISAGREES WITH THE C ORACLES" "$WORK/mut/results.json" ||
  { echo "judge mutant with --full: no disagreement recorded"; exit 1; }
echo "copied back with --full: $copied bytes for $outputs outputs"
echo "full host check beside the device path on the CPU stand-ins: PASS"
