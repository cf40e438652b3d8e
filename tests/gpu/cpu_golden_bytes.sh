#!/usr/bin/env bash
# The GPU layout and quantizer backends judged on the golden bundles (a4w4check_cpu, the CPU
# stand-ins): hip-layout on a GEMM bundle (its layouts of the bundle's operands), hip-quant on
# the quantization bundle (x_bf16 in every scale mode against the bundle's codes and scales),
# each an entry that compares bytes, the run PASS; a quantizer that flips one scale bit
# (A4W4_GPU_CPU_FAULT=quant) fails its golden entry, exit 1.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
run() { "$CLI" run --set edge --case golden/g1_m1_n256_k512 --case golden/q1_quant_modes \
          --backend hip-layout,hip-quant --e8m0-code0 2^-127 --out "$WORK/$1" --quiet; }
run ok
python3 - "$WORK/ok/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "PASS", d["verdict"]
got = {(e["name"], e["backend"]): e for e in d["cases"]}
for k in [("golden/g1_m1_n256_k512", "hip-layout"), ("golden/q1_quant_modes", "hip-quant")]:
    assert k in got, "no entry %s@%s" % k
    assert got[k]["verdict"] == "pass" and got[k]["checked_outputs"] > 0, got[k]
# four scale modes, codes and scales: 4 * 64 * (128 + 8) bytes
assert got[("golden/q1_quant_modes", "hip-quant")]["checked_outputs"] == 4 * 64 * 136
print("golden bundles judged: hip-layout and hip-quant pass")
PY
set +e
A4W4_GPU_CPU_FAULT=quant run fault
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "a wrong quantizer on the golden bundle: exit $rc, expected 1"; exit 1; }
grep -q '"name":[[:space:]]*"golden/q1_quant_modes"' "$WORK/fault/results.json"
python3 - "$WORK/fault/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = [e for e in d["cases"] if e["name"] == "golden/q1_quant_modes" and e["backend"] == "hip-quant"]
assert e and e[0]["verdict"] == "fail", e
print("a wrong quantizer fails its golden entry")
PY
echo "golden bytes on the CPU stand-ins: PASS"
