#!/usr/bin/env bash
# The device-judge path of `run` on the CPU stand-ins (a4w4check_cpu): the edge set (E8M0 code 0
# read as 2^-127, the reading the kernels and the judge implement: contracts §1) through the
# matrix-unit backends, the layouts and the quantizer, every output judged "on the device";
# then the judge's mutant (A4W4_JUDGE_CPU_FAULT=1, a deliberately wrong judge) must make the
# run fail by the C oracles' re-check, naming it.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
B=hip-mma-32x128,hip-mma-256x256,hip-mma:dispatch,hip-mma-splitk,hip-mma-atomic,hip-mma-fallback,hip-asm-64x256,hip-layout,hip-quant,cpu-fallback
"$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "$B" --out "$WORK/ok" --quiet
grep -q '"judge":[[:space:]]*"CPU stand-in' "$WORK/ok/results.json" ||
  { echo "no device judge recorded"; exit 1; }
dev=$(grep -o '"outputs_device":[[:space:]]*[0-9]*' "$WORK/ok/results.json" | grep -o '[0-9]*$')
[ "$dev" -gt 0 ] || { echo "no output compared on the device"; exit 1; }
grep -q "GPU judge: every output; [0-9]* sampled outputs re-checked by the C oracles" \
  "$WORK/ok/results.json" || { echo "no re-check note"; exit 1; }
# the same verdicts as the host path (--host-judge), entry for entry
"$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "$B" --host-judge --out "$WORK/host" --quiet
v() { grep -o '"verdict":[[:space:]]*"[a-z/]*"' "$1" | tr -d ' \t'; }
[ "$(v "$WORK/ok/results.json")" = "$(v "$WORK/host/results.json")" ] ||
  { echo "device and host verdicts differ"; exit 1; }
# the judge's mutant is killed by the re-check: exit 1, the oracle entry names it
set +e
A4W4_JUDGE_CPU_FAULT=1 "$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend hip-mma-32x128 \
  --out "$WORK/mut" --quiet
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "judge mutant: exit $rc, expected 1"; exit 1; }
grep -q "THE GPU JUDGE DISAGREES WITH THE C ORACLES" "$WORK/mut/results.json" ||
  { echo "judge mutant: no disagreement recorded"; exit 1; }
echo "device path on the CPU stand-ins: PASS"
