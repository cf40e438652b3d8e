#!/usr/bin/env bash
# W made on the device (docs/gpu.md, "W made on the device") on the CPU stand-ins
# (a4w4check_cpu): a run where the device judge makes W of every case it judges whole
# (a4w4j_gen_w; the host generates only its sample's rows) gives the same results.json, entry by
# entry apart from times (and the run-to-run values of atomic and bounded outputs), as the same
# run with W generated on the host and uploaded (A4W4_HOST_W=1), on a mixed set: sampled cases
# of every regime the device path takes at shapes with and without the preshuffle and the
# scale swizzle, a range case (never deferred), a small case (sampled in full: nothing
# deferred). The W-made run must say it made W (stages.w_device_bytes > 0; 0 with
# A4W4_HOST_W=1) and generated none of it on the host after all (stages.w_host_bytes 0: no
# entry of the run reads every row of W on the host, hip-quant included). Host readers of W's unsampled rows: a code-0 case without a stated reading
# (the device judge declines it: every entry on the host), and --save-failing on a wrong kernel
# (A4W4_GPU_CPU_FAULT=gemm), whose bundles must hold every byte of W: `verify` finds each
# bundle's operands and layouts as the generator makes them and only its y_got wrong, and
# the bundles' tensors equal the host-W run's.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
{ echo "name,M,N,K,regime,seed,tags"
  echo "g_exact,33,512,4096,exact,8101,"
  echo "g_normal,33,512,4096,normal,8102,"
  echo "g_special,40,416,4096,special,8103,"
  echo "g_tiny,40,400,4224,tiny,8104,"
  echo "g_wide,33,515,4096,wide,8105,"
  echo "g_code0,48,352,4096,code0,8106,"
  echo "g_range,33,512,4096,range,8107,"
  echo "g_small,8,128,512,special,8108,"; } >"$WORK/cases.csv"
grep -E '^(name|g_code0|g_exact),' "$WORK/cases.csv" >"$WORK/cases0.csv"
B=hip-mma-32x128,hip-mma:dispatch,hip-mma-splitk,hip-mma-atomic,hip-layout,hip-quant
run() { # out [options]; the run's exit status must be 0
  local out=$1; shift
  "$CLI" run --cases "$WORK/cases.csv" --no-golden --backend "$B" --out "$WORK/$out" --quiet "$@" \
    >"$WORK/$out.log" 2>&1 || { cat "$WORK/$out.log"; echo "run $out: exit $?"; exit 1; }
}
run devw --e8m0-code0 2^-127
A4W4_HOST_W=1 run hostw --e8m0-code0 2^-127
# the code-0 case without a stated reading: the device judge declines it, its entries read W on
# the host (ambiguous entries are INCOMPLETE, exit 5: compared, not required to pass)
set +e
"$CLI" run --cases "$WORK/cases0.csv" --no-golden --backend "$B" --out "$WORK/devw0" --quiet \
  >"$WORK/devw0.log" 2>&1
rc0=$?
A4W4_HOST_W=1 "$CLI" run --cases "$WORK/cases0.csv" --no-golden --backend "$B" --out "$WORK/hostw0" \
  --quiet >"$WORK/hostw0.log" 2>&1
rc1=$?
set -e
[ "$rc0" = "$rc1" ] || { echo "no stated code-0 reading: exit $rc0 with W on the device, $rc1 without"; exit 1; }
python3 - "$WORK" <<'PY'
import json, sys
W = sys.argv[1]
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, "tests/gpu")
import results_entries
def entries(name):
    return results_entries.entries("%s/%s" % (W, name))
for a, b, cases in (("devw", "hostw", 8), ("devw0", "hostw0", 2)):
    da, ea = entries(a)
    db, eb = entries(b)
    assert len(ea) == cases * 7 and ea.keys() == eb.keys(), (a, len(ea), len(eb))
    for k in ea:
        assert ea[k] == eb[k], "%s vs %s: entry %s differs:\n%s\n%s" % (a, b, k, ea[k], eb[k])
    assert da["verdict"] == db["verdict"], (a, da["verdict"], db["verdict"])
    bad = [k for k in ea if ea[k]["verdict"] == "fail"]
    assert not bad, "%s: failing entries %s" % (a, bad)
    made, up = da["stages"]["w_device_bytes"], db["stages"]["w_device_bytes"]
    assert made > 0 and up == 0, (a, made, up)
    print("%s: %d entries as with W uploaded (%s); %.0f bytes of W made on the device"
          % (a, len(ea), da["verdict"], made))
# the declined code-0 case's W is the host's: only g_exact's was made on the device
d0, _ = entries("devw0")
assert d0["stages"]["w_device_bytes"] == 512 * 4096 // 2 + 2 * 512 * 4096 // 32, d0["stages"]
assert d0["stages"]["w_host_bytes"] > 0, d0["stages"]
# with the reading stated every case is judged on the device and no entry reads W on the host:
# hip-quant reads only the activations (n/a outside the normal regime), so the host never
# generates the W it deferred (it did for every non-normal case before)
dw, _ = entries("devw")
assert dw["stages"]["w_host_bytes"] == 0, dw["stages"]
PY
# --save-failing on a wrong kernel: the bundles hold every byte of W
for mode in devw hostw; do
  set +e
  if [ "$mode" = hostw ]; then export A4W4_HOST_W=1; else unset A4W4_HOST_W; fi
  A4W4_GPU_CPU_FAULT=gemm "$CLI" run --e8m0-code0 2^-127 --cases "$WORK/cases.csv" --no-golden \
    --backend hip-mma-32x128 --save-failing "$WORK/saved_$mode" --out "$WORK/bad_$mode" --quiet \
    >"$WORK/bad_$mode.log" 2>&1
  rc=$?
  set -e
  [ "$rc" = 1 ] || { cat "$WORK/bad_$mode.log"; echo "faulty kernel ($mode): exit $rc, expected 1"; exit 1; }
done
unset A4W4_HOST_W
n=$(ls "$WORK/saved_devw"/*.safetensors 2>/dev/null | wc -l)
[ "$n" -ge 6 ] || { ls "$WORK/saved_devw"; echo "$n failing bundles saved, expected 6 or more"; exit 1; }
set +e
"$CLI" verify "$WORK/saved_devw"/*.safetensors >"$WORK/verify.log" 2>&1
set -e
bad=$(grep '^FAIL' "$WORK/verify.log" | grep -v 'y_got' || true)
[ -z "$bad" ] && grep -q '^PASS .* y_expected' "$WORK/verify.log" ||
  { cat "$WORK/verify.log"; echo "a saved bundle's operands are not the generator's"; exit 1; }
python3 - "$WORK/saved_devw" "$WORK/saved_hostw" <<'PY'
import json, os, struct, sys
a, b = sys.argv[1:]
def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    base = 8 + n
    return {k: raw[base + v["data_offsets"][0]:base + v["data_offsets"][1]]
            for k, v in head.items() if k != "__metadata__" and (k.startswith("w_") or k.startswith("a_"))}
names = sorted(f for f in os.listdir(a) if f.endswith(".safetensors"))
assert names == sorted(f for f in os.listdir(b) if f.endswith(".safetensors")), "bundle sets differ"
for f in names:
    ta, tb = tensors(os.path.join(a, f)), tensors(os.path.join(b, f))
    assert "w_fp4" in ta and ta.keys() == tb.keys(), (f, sorted(ta), sorted(tb))
    for k in ta:
        assert ta[k] == tb[k], "%s: tensor %s differs from the host-W run's" % (f, k)
print("%d bundles: every operand and layout tensor as with W uploaded" % len(names))
PY
echo "W made on the device, on the CPU stand-ins: PASS"
