#!/usr/bin/env bash
# The preshuffled weight on the device path (a4w4check_cpu, the CPU stand-ins): when the device
# judges every entry of a case, the host generates it only for a host reader
# (a4w4_case_generate_dev, a4w4_case_wsh_complete). A sampled case (64x512x4096, above 2^26
# multiply-adds) and an E8M0 code-0 case run without a stated reading (the device judge does
# not take it: its HIP entries run on the host, reading the host's layouts) through
# hip-mma-32x128 and hip-layout: no entry fails (the code-0 case's may be ambiguous, contracts
# §1); the same with cpu-asm (a host reader: made at generation) passes. Then hip-mma-32x128
# with --save-failing on a deliberately wrong kernel (A4W4_GPU_CPU_FAULT=gemm) on the sampled
# case and a small one (every output on the host sample too, whose bundle is written from the
# run's own operands): each saved bundle's w_fp4_shuffled is verified by `verify` (its
# recorded y_got fails, as it should). Without the host's preshuffle where a host reader
# comes, those entries would read zeros and fail.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
printf 'name,M,N,K,regime,seed,tags\nsampled,64,512,4096,wide,41,deferred\nzero,33,256,512,code0,42,deferred\n' \
  >"$WORK/c.csv"
printf 'name,M,N,K,regime,seed,tags\nsampled,64,512,4096,wide,41,deferred\nsmall,32,256,512,wide,43,deferred\n' \
  >"$WORK/c2.csv"
run() { # out backends [options]; prints the exit status
  local out=$1 b=$2
  shift 2
  set +e
  "$CLI" run --cases "$WORK/c.csv" --no-golden --budget-seconds 0 --backend "$b" --out "$WORK/$out" \
    --quiet "$@" >"$WORK/$out.log" 2>&1
  echo $?
  set -e
}
rc=$(run dev hip-mma-32x128,hip-layout)
[ "$rc" = 0 ] || [ "$rc" = 5 ] || { cat "$WORK/dev.log"; echo "device-only run: exit $rc"; exit 1; }
rc=$(run host hip-mma-32x128,cpu-asm --e8m0-code0 2^-127)
[ "$rc" = 0 ] || { cat "$WORK/host.log"; echo "run with cpu-asm: exit $rc, expected 0"; exit 1; }
python3 - "$WORK/dev/results.json" "$WORK/host/results.json" <<'PY'
import json, sys
dev, host = (json.load(open(p))["cases"] for p in sys.argv[1:])
bad = [(e["name"], e["backend"], e["verdict"], e.get("note")) for e in dev + host
       if e["verdict"] not in ("pass", "n/a", "ambiguous")]
assert not bad, bad
zero = [e for e in dev if e["name"] == "zero" and e["backend"] != "oracle"]
assert len(zero) == 2, zero
mma = [e for e in zero if e["backend"] == "hip-mma-32x128"][0]
assert mma["verdict"] == "pass" or "every checked output matches E8M0 code 0" in mma["note"], mma
lay = [e for e in zero if e["backend"] == "hip-layout"][0]
assert lay["verdict"] == "pass" and lay["checked_outputs"] > 0, lay
asm = [e for e in host if e["backend"] == "cpu-asm"]
assert len(asm) == 2 and all(e["verdict"] == "pass" for e in asm), asm
print("no entry fails: %d entries" % (len(dev) + len(host)))
PY
set +e
A4W4_GPU_CPU_FAULT=gemm "$CLI" run --e8m0-code0 2^-127 --cases "$WORK/c2.csv" --no-golden \
  --budget-seconds 0 --backend hip-mma-32x128 --save-failing "$WORK/saved" --out "$WORK/bad" \
  --quiet >"$WORK/bad.log" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat "$WORK/bad.log"; echo "faulty kernel: exit $rc, expected 1"; exit 1; }
n=$(ls "$WORK/saved"/*.safetensors 2>/dev/null | wc -l)
[ "$n" = 2 ] || { ls "$WORK/saved"; echo "$n failing bundles saved, expected 2"; exit 1; }
set +e
"$CLI" verify "$WORK/saved"/*.safetensors >"$WORK/verify.log" 2>&1
set -e
ok=$(grep -c '^PASS .* w_fp4_shuffled' "$WORK/verify.log" || true)
[ "$ok" = 2 ] && ! grep -q '^FAIL .* w_fp4_shuffled' "$WORK/verify.log" ||
  { cat "$WORK/verify.log"; echo "the saved bundles' w_fp4_shuffled: $ok of 2 verify"; exit 1; }
echo "deferred preshuffle on the CPU stand-ins: PASS"
