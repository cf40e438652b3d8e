#!/usr/bin/env bash
# The run's accounting on the CPU stand-ins (a4w4check_cpu): many small cases through the
# device path of the matrix-unit GEMMs, the layouts and the quantizer. The stage table of
# results.json must sum to its wall within 2 % (other_s, the unattributed rest, at most 2 %
# of wall_s), every entry of a generated case must carry its whole cost (cost_ms, no less
# than the backend's own run_ms), and the device buffers must be kept across cases: the
# stand-in's count of device allocations (A4W4_GPU_CPU_COUNT) is the same for 8 cases of
# one shape as for 32. bench prints the per-entry cost of a 1x128x256 case per GPU backend.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
cases() { # $1 cases of 1x128x256 (the per-entry overhead shape), regimes alternating
  echo "name,M,N,K,regime,seed,tags"
  for i in $(seq 1 "$1"); do
    echo "small$i,1,128,256,$([ $((i % 2)) = 0 ] && echo normal || echo exact),$((7000 + i)),overhead"
  done
}
cases 32 >"$WORK/c32.csv"
cases 8 >"$WORK/c8.csv"
B=hip-mma-32x128,hip-mma-256x256,hip-mma:dispatch,hip-mma-splitk,hip-mma-atomic,hip-mma-fallback,hip-layout,hip-quant
run() { A4W4_GPU_CPU_COUNT="$WORK/$1.count" "$CLI" run --e8m0-code0 2^-127 --cases "$WORK/$1.csv" \
          --no-golden --backend "$B" --out "$WORK/$1" --quiet; }
run c32
run c8
python3 - "$WORK/c32/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stages"]
parts = ["setup_s", "generate_s", "judge_s", "kernels_s", "host_oracle_s", "record_s",
         "bundles_s", "write_s", "finish_s"]
total = sum(s[k] for k in parts)
assert abs(s["wall_s"] - total) <= 0.02 * s["wall_s"], \
    "stages sum to %.3f s of a %.3f s wall" % (total, s["wall_s"])
assert abs(s["other_s"] - (s["wall_s"] - total)) < 1e-6, "other_s is not the rest"
assert s["backend_runs_s"] <= s["kernels_s"], "the backends' runs exceed their stage"
n = 0
for e in d["cases"]:
    assert "cost_ms" in e, "entry %s@%s has no cost_ms" % (e["name"], e["backend"])
    assert e["cost_ms"] >= (e.get("run_ms") or 0), "cost_ms below run_ms: %s" % e
    n += 1
assert n == 32 * 9, "%d entries" % n
print("stages add up: %.3f of %.3f s; %d entries with their cost" % (total, s["wall_s"], n))
PY
a32=$(cat "$WORK/c32.count") a8=$(cat "$WORK/c8.count")
[ "$a32" = "$a8" ] || { echo "device allocations grow with the cases: 8 cases $a8, 32 cases $a32"; exit 1; }
echo "device allocations: $a32 for 8 or 32 cases of one shape"
# bench's per-entry cost rows: one per GPU backend, the entry no cheaper than its own run
"$CLI" bench --shapes 1,128,256 --backends-only --backend hip-layout,hip-quant --reps 3 \
  >"$WORK/bench.txt"
for b in hip-layout hip-quant; do
  line=$(grep "^entry cost 1x128x256 *$b " "$WORK/bench.txt") ||
    { cat "$WORK/bench.txt"; echo "bench: no entry cost row for $b"; exit 1; }
  echo "$line" | grep -Eq "entry [0-9.]+ ms, its run [0-9.]+ ms, per-entry overhead [0-9.]+ ms" ||
    { echo "bench: $line"; exit 1; }
done
echo "accounting on the CPU stand-ins: PASS"
