#!/usr/bin/env bash
# ci/device-nightly.sh OUT [DEBDIR] — the nightly in one step on a single-GPU NVIDIA host without
# Debian's -dev packages (docs/nightly.md): unpack DEBDIR's Debian packages (cJSON, libcsv,
# OpenBLAS, pkgconf, libgfortran5; without DEBDIR the host's own libraries are used)
# into /tmp/a4w4-prefix with ci/unpack-debs.sh, then ci/nightly-gpu.sh --quick with
# GROUPS_PER_GPU=1 SET=premerge (its build: BUILD_TESTING=OFF, -DA4W4_GPU=nvidia, only the
# a4w4check, a4w4_gpu_check and a4w4_gpu_emu targets). Writes OUT/nightly.tar.gz (the reports:
# logs, every group's results, the merged results.json, summary.md, junit.xml, report.html,
# groups.md) and OUT/summary.txt (each group's wall time, the merged verdict and counts, the
# steps' times: how long the whole takes is not stated here; summary.txt measures it). Prints
# at the end the harness step's wall, its stage table and the GPU utilization during it (as
# ci/nightly-gpu.sh logs them) and the whole wall. Env:
# GROUPS_PER_GPU, SET, BACKENDS, BUILD_DIR, RUN_ARGS (default --budget-seconds 0) as
# ci/nightly-gpu.sh takes them; PREBUILT=DIR passes
# --prebuilt DIR (a dry run without a GPU: A4W4_GPU=nvidia PREBUILT=...
# BACKENDS=cpu-fallback,cpu-asm).
# Exit: ci/nightly-gpu.sh's (0 pass, 1 a check failed, 2 missing library or build, 77 no GPU).
set -uo pipefail
out=${1:?usage: ci/device-nightly.sh OUT [DEBDIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
deb=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
t0=$SECONDS
stamp() { printf '%4d s  %s\n' $((SECONDS - t0)) "$*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"
prefix=/tmp/a4w4-prefix
if [ -n "$deb" ] && [ -d "$deb" ]; then
  # the environment unpack-debs prints covers what A4W4_DEPS_PREFIX alone would not (a
  # libgfortran5 unpacked by an older unpack-debs.sh beside the prefix)
  if env_lines=$(bash "$root/ci/unpack-debs.sh" "$deb" "$prefix" 2>"$out/unpack.log"); then
    eval "$env_lines"
    export A4W4_DEPS_PREFIX=$prefix
    stamp "unpacked $(ls "$deb"/*.deb 2>/dev/null | wc -l) .debs from $deb into $prefix"
  else
    stamp "unpacking $deb failed: $(tail -n 1 "$out/unpack.log")"
  fi
else
  stamp "no DEBDIR${deb:+ at $deb}: using the host's libraries"
fi
command -v nvcc >/dev/null 2>&1 || export PATH=$PATH:/usr/local/cuda/bin
report=/tmp/a4w4-device-nightly
rm -rf "$report"
# RUN_ARGS defaults to --budget-seconds 0: the device judges every output of the GPU backends
# whatever the budget, which buys full host checks of the CPU backends (cpu-asm, cpu-fallback)
# alone; on the pre-merge set's large grids those took 52 of 81 s on an H100 (docs/gpu.md),
# and the CPU jobs check them in full anyway. RUN_ARGS= (empty) restores run's default budget.
RUN_ARGS=${RUN_ARGS---budget-seconds 0} \
GROUPS_PER_GPU=${GROUPS_PER_GPU:-1} SET=${SET:-premerge} REPORT_DIR=$report \
  BUILD_DIR=${BUILD_DIR:-/tmp/a4w4-nightly-build} bash "$root/ci/nightly-gpu.sh" --quick \
  ${PREBUILT:+--prebuilt "$PREBUILT"} \
  >"$out/nightly-gpu.out" 2>&1
rc=$?
stamp "ci/nightly-gpu.sh --quick (GROUPS_PER_GPU=${GROUPS_PER_GPU:-1}, SET=${SET:-premerge}): exit $rc"
# the steps and groups as nightly-gpu.sh logged them (times in parentheses / "wall N s")
sed -n 's/^nightly-gpu: //p' "$report/nightly.log" 2>/dev/null | sed 's/^/      /' >>"$out/summary.txt"
m=$report/run/merged/results.json
if [ -f "$m" ]; then
  python3 - "$m" >>"$out/summary.txt" 2>&1 <<'PY' || grep -o '"counts":{[^}]*}' "$m" >>"$out/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
c = d.get("counts", {})
print("      merged: verdict %s; %s entries, %s pass, %s fail, %s n/a, %s skip; items %s of %s; "
      "commit %s" % (d.get("verdict"), c.get("entries"), c.get("pass"), c.get("fail"),
      c.get("n/a"), c.get("skip"), c.get("recorded_items"), c.get("expected_items"),
      d.get("environment", {}).get("git_commit")))
PY
  [ -f "$report/run/merged/groups.md" ] && sed 's/^/      /' "$report/run/merged/groups.md" >>"$out/summary.txt"
else
  echo "      no merged results (see nightly-gpu.out)" >>"$out/summary.txt"
fi
cp "$out/nightly-gpu.out" "$report/" 2>/dev/null
tar czf "$out/nightly.tar.gz" -C "$(dirname "$report")" "$(basename "$report")" 2>/dev/null
# the harness step's wall, stage table and GPU utilization, then the whole wall
sed -n 's/^nightly-gpu: \(harness wall\|stages\|GPU .*utilization\)/\1/p' "$report/nightly.log" \
  2>/dev/null | sed 's/^/      /'
stamp "done: $out/nightly.tar.gz (whole wall $((SECONDS - t0)) s)"
exit $rc
