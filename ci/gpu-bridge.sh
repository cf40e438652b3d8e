#!/usr/bin/env bash
# ci/gpu-bridge.sh OUTDIR [DEBDIR] — the Python bridge on an NVIDIA GPU host (docs/bridge.md,
# "The same chain on an NVIDIA GPU"): build the CLI (BUILD_TESTING off; cJSON, libcsv
# and OpenBLAS from DEBDIR's unpacked Debian packages when the machine has no -dev packages),
# export the premerge and edge sets with the golden bundles, run triton-dot-scaled (GPU) and
# torch-dequant (GPU) through python -m a4w4check.external, judge both with
# `run --backend bundle:`, compare the two paths with `compare --pair`, and capture a tiny model
# whose gemm_a4w4 is backed by Triton, judged by `verify` and `run --captures`.
# Every log goes under OUTDIR. Exit: 0 when every step ran (verdicts are in the logs).
set -u
out=${1:?usage: ci/gpu-bridge.sh OUTDIR [DEBDIR]}
deb=${2:-}
mkdir -p "$out"
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$out/steps.log"; }
step() { local name=$1; shift; local t0=$SECONDS; "$@" > "$out/$name.log" 2>&1; local rc=$?
         log "$name: exit $rc ($((SECONDS - t0)) s)"; return 0; }
if [ -n "$deb" ]; then eval "$(bash "$deb/unpack-debs.sh" "$deb" /tmp/a4w4-deps)"; fi
b=/tmp/a4w4-build
step build bash -c "cmake -S . -B $b -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build $b -j\$(nproc)"
cli=$b/a4w4check
[ -x "$cli" ] || { log "build failed: see build.log"; exit 1; }
export PYTHONPATH="$PWD/python" PYTHONUNBUFFERED=1
w=/tmp/a4w4-bridge
rm -rf "$w" && mkdir -p "$w"
for set in premerge edge; do
  step "export-$set" "$cli" export --set "$set" --out "$w/ops-$set" --quiet
  for k in triton-dot-scaled torch-dequant; do
    step "external-$set-$k" python3 -m a4w4check.external --ops "$w/ops-$set" --out "$w/$set-$k" \
      --kernel "$k" --device cuda
  done
  step "run-$set" "$cli" run --set "$set" --backend "bundle:$w/$set-triton-dot-scaled,bundle:$w/$set-torch-dequant" \
    --out "$out/run-$set" --quiet
  step "compare-$set" "$cli" compare "$out/run-$set/results.json" "$out/run-$set/results.json" \
    --pair "bundle:$w/$set-torch-dequant=bundle:$w/$set-triton-dot-scaled" --out "$out/parity-$set"
done
export PYTHONPATH="$PWD/python:$PWD/python/tests/fake_aiter:$PWD/python/tests"
step capture python3 python/tools/capture_demo.py "$w/captures" --triton
step verify-captures bash -c "$cli verify $w/captures/*.safetensors"
step run-captures "$cli" run --cases cases/edge.csv --no-golden --backend cpu-fallback \
  --captures "$w/captures" --out "$out/run-captures" --quiet
# where the outside kernels fail, by regime (the verdicts are in run-*/results.json)
python3 - "$out" <<'PY' > "$out/failures-by-regime.txt" 2>&1
import collections, json, sys
for s in ("premerge", "edge"):
    doc = json.load(open(f"{sys.argv[1]}/run-{s}/results.json"))
    c = collections.Counter((e["backend"].rsplit("/", 1)[-1], e["regime"], e["verdict"])
                            for e in doc["cases"] if e["backend"].startswith("bundle:"))
    for k, n in sorted(c.items()):
        print(s, *k, n)
    nan = [e["name"] for e in doc["cases"] if e["verdict"] == "fail" and
           any(m["got"] in ("0x7fff", "0xffff", "0x7fc0") for m in e.get("first_mismatches", []))]
    print(s, "failing entries whose first mismatch is a NaN:", len(nan))
PY
tar czf "$out/all.tgz" -C "$out" --exclude all.tgz . 2>/dev/null
log "done"
