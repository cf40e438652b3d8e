#!/usr/bin/env bash
# The run's accounting on the CPU stand-ins (a4w4check_cpu): many small cases through the
# device path of the matrix-unit GEMMs, the layouts and the quantizer. The stage table of
# results.json must sum to its wall within 2 % (other_s, the unattributed rest, at most 2 %
# of wall_s; also with cases of a large K among small ones, and on the progress line's table,
# which prints the wall it sums to), every entry of a generated case must carry its whole cost (cost_ms, no less
# than the backend's own run_ms), the pad variants' runs be counted apart (variant_runs_s), and the device buffers must be kept across cases: the
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
# Small cases around two of a large K (the nightly's n3456_k517376 kind, K cut to 65536: their
# generation and judging take most of the wall), not quiet: the progress line's stage table,
# printed after the last item, must sum to the wall it prints.
{ cases 3; echo "bigk1,1,256,65536,special,7101,overhead"; echo "bigk2,2,256,65536,normal,7102,"
  echo "small9,1,128,256,exact,7109,overhead"; } >"$WORK/mixed.csv"
"$CLI" run --e8m0-code0 2^-127 --cases "$WORK/mixed.csv" --no-golden --backend "$B" \
  --out "$WORK/mixed" 2>"$WORK/mixed.err"
python3 - "$WORK/mixed.err" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if "stages after" in l]
assert lines, "no stage line in the progress:\n" + open(sys.argv[1]).read()
l = lines[-1]
assert "stages after 6 items" in l, "no stage line after the last item: " + l
m = re.search(r"write [0-9.]+ s = ([0-9.]+) s of ([0-9.]+) s wall \(other (-?[0-9.]+) s\)", l)
assert m, "the stage line names no sum and wall: " + l
parts = [float(x) for x in re.findall(r"(?:setup|generate|judge|backends|host oracles|record|"
                                      r"bundles|write) ([0-9.]+) s", l)]
tot, wall, other = float(m.group(1)), float(m.group(2)), float(m.group(3))
# each figure is printed to 0.1 s: allow its rounding, not more
assert len(parts) == 8 and abs(sum(parts) - tot) <= 0.05 * 9 + 1e-9, l
assert abs(other) <= 0.02 * wall + 0.05, "progress: other %.1f s of %.1f s wall" % (other, wall)
assert abs(wall - tot - other) <= 0.15 + 1e-9, "progress: the sum, wall and other disagree: " + l
print("progress line adds up: %.1f of %.1f s" % (tot, wall))
PY
for doc in c32 mixed; do python3 - "$WORK/$doc/results.json" "$doc" <<'PY'
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
# the pad variants' reruns (every case here has pad rows: two variants per tile GEMM) are
# kernel time of their own, beside the baselines' run_ms, inside the backends' stage
assert s["variant_runs_s"] > 0, "the pad variants' runs are not accounted: %s" % s
assert s["backend_runs_s"] + s["variant_runs_s"] <= s["kernels_s"], \
    "the backends' and variants' runs exceed their stage: %s" % s
n = 0
for e in d["cases"]:
    assert "cost_ms" in e, "entry %s@%s has no cost_ms" % (e["name"], e["backend"])
    assert e["cost_ms"] >= (e.get("run_ms") or 0), "cost_ms below run_ms: %s" % e
    n += 1
assert n == {"c32": 32, "mixed": 6}[sys.argv[2]] * 9, "%d entries" % n
print("stages add up: %.3f of %.3f s; %d entries with their cost" % (total, s["wall_s"], n))
PY
done
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
