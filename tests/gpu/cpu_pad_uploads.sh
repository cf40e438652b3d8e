#!/usr/bin/env bash
# Pad variants on the device path without an upload per backend (a4w4check_cpu, the CPU
# stand-ins): one case of 33x256x512 (33 rows: pad rows, so two pad variants, row fills 0xFF
# and 0x00) through one matrix-unit GEMM, then through four. The stand-in counts the
# host-to-device copies (A4W4_GPU_CPU_UPLOADS): the case's operands and each pad fill's
# a_scale_shuffled are uploaded once per case, so the count must not grow with the backends.
# Both runs pass, each GEMM entry with its two variants run.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
printf 'name,M,N,K,regime,seed,tags\npads,33,256,512,normal,31,pads\n' >"$WORK/c.csv"
run() { # out backends
  A4W4_GPU_CPU_UPLOADS="$WORK/$1.uploads" "$CLI" run --e8m0-code0 2^-127 --cases "$WORK/c.csv" \
    --no-golden --backend "$2" --out "$WORK/$1" --quiet
}
run one hip-mma-32x128
run four hip-mma-32x128,hip-mma-256x256,hip-mma-splitk,hip-mma-atomic
one=$(cat "$WORK/one.uploads") four=$(cat "$WORK/four.uploads")
[ "$one" = "$four" ] ||
  { echo "uploads grow with the backends: $one for one GEMM, $four for four"; exit 1; }
python3 - "$WORK/four/results.json" <<'PY'
import json, sys
es = [e for e in json.load(open(sys.argv[1]))["cases"] if e["backend"].startswith("hip-mma")]
assert len(es) == 4, es
for e in es:
    assert e["verdict"] == "pass" and e["pad_variants"] == 2, e
print("4 GEMM entries, 2 pad variants each, all pass")
PY
echo "uploads per case: $one for one GEMM backend or four"
echo "pad variants without per-backend uploads on the CPU stand-ins: PASS"
