#!/usr/bin/env bash
# ci/nightly-shard.sh — one shard group of the nightly: the step every place runs the nightly
# from (ci/nightly-gpu.sh per GPU, the GitHub workflow per job, tests/cli/nightly_steps.sh per
# process). Group g of G is `a4w4check run --shard g/G` (harness/commands/matrix.c splits the
# matrix by cost; deterministic: the same g/G always owns the same items), so G groups merge
# into one verdict with ci/nightly-merge.sh and a missing group makes that merge refuse.
#
# Usage: ci/nightly-shard.sh --group g/G --out DIR [--set S] [--backends B] [--cli PATH]
#                            [-- RUN_ARGS...]
#   --group g/G   this group's index and the group count (1 <= g <= G)
#   --out DIR     the shard's results (results.jsonl, results.json, summary.md), run.log and
#                 group.txt (group, set, backends, host, visible devices, exit, wall seconds)
#   --set S       case set (default nightly); --backends B: a4w4check --backend list (default
#                 the hip-mma-* GEMMs, hip-layout, hip-quant, cpu-asm and cpu-fallback); --cli:
#                 the a4w4check
#                 binary (default $A4W4CHECK, else build/a4w4check)
#   RUN_ARGS      passed to `a4w4check run` as is (e.g. --no-golden, --budget-seconds S)
# The device is whatever CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES leave visible: the caller
# pins it. Prints the run's progress lines, then one line: group, exit code, wall time.
# Exit: the run's exit code (0 pass, 1 mismatch, ...; see `a4w4check run --help`); 2 bad usage.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
group="" out="" set_name=nightly
backends=hip-mma-32x128,hip-mma-64x256,hip-mma-128x128,hip-mma-256x256,hip-mma:dispatch,hip-mma-splitk,hip-mma-atomic,hip-mma-fallback,hip-layout,hip-quant,cpu-asm,cpu-fallback
cli=${A4W4CHECK:-$root/build/a4w4check}
usage() { echo "usage: ci/nightly-shard.sh --group g/G --out DIR [--set S] [--backends B] [--cli PATH] [-- RUN_ARGS...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --group) group=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --set) set_name=${2:-}; shift ;;
    --backends) backends=${2:-}; shift ;;
    --cli) cli=${2:-}; shift ;;
    --) shift; break ;;
    *) usage ;;
  esac
  shift || usage
done
[ -n "$out" ] || usage
# the same rule as run --shard: decimal without sign or leading zeros (kept short enough for
# the shell's arithmetic), 1 <= g <= G
if ! [[ "$group" =~ ^([1-9][0-9]{0,8})/([1-9][0-9]{0,8})$ ]] ||
   [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
  echo "nightly-shard: --group '$group': must be g/G with 1 <= g <= G" >&2
  exit 2
fi
[ -x "$cli" ] || { echo "nightly-shard: --cli $cli: not an executable a4w4check" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd) || exit 2   # absolute before the cd below
# One group at a time in DIR: this script's lock (fd 9, for its whole life) is taken before
# anything in DIR is touched, and the run's own lock (a4w4check's, see harness/io/fsutil.h) is
# checked free while the old files go; so a second nightly-shard.sh, or one started beside a
# running `a4w4check run --out DIR`, stops here with exit 2 instead of deleting the live
# results.jsonl. (The run itself gets no fd 9: 9>&- below.)
in_use() { echo "nightly-shard: --out $out is in use by $1: nothing removed, nothing run" >&2; exit 2; }
exec 9>>"$out/.nightly-shard.lock" || exit 2
flock -n 9 || in_use "another ci/nightly-shard.sh (lock $out/.nightly-shard.lock)"
# no stale verdict: the documents of an earlier run in DIR go (and its results.jsonl, unless
# the caller resumes it), so a run that stops early leaves nothing a merge could take as done
case " $* " in *" --resume "*) jsonl="" ;; *) jsonl=$out/results.jsonl ;; esac
( flock -n 8 || exit 3
  rm -f "$out/results.json" "$out/summary.md" "$out/group.txt" ${jsonl:+"$jsonl"}
) 8>>"$out/.a4w4check.lock"
case $? in
  0) ;;
  3) in_use "a running a4w4check (lock $out/.a4w4check.lock)" ;;
  *) exit 2 ;;
esac
cd "$root" || exit 2
t0=$(date +%s)
# the run's progress lines (one every 5 s, the stage table every 100 items) go to run.log and
# to this script's output, the caller's group log, so a running group shows where it is
"$cli" run --set "$set_name" --backend "$backends" --shard "$group" --out "$out" "$@" \
  2>&1 9>&- | tee "$out/run.log"
rc=${PIPESTATUS[0]}
wall=$(( $(date +%s) - t0 ))
cat >"$out/group.txt" <<INFO
group=$group
set=$set_name
backends=$backends
run_args=$*
host=$(hostname 2>/dev/null || echo unknown)
cuda_visible_devices=${CUDA_VISIBLE_DEVICES:-}
hip_visible_devices=${HIP_VISIBLE_DEVICES:-}
exit=$rc
wall_s=$wall
INFO
verdict=$(grep -o '"verdict":[[:space:]]*"[A-Z]*"' "$out/results.json" 2>/dev/null | tail -n 1 |
          grep -o '[A-Z]*')
echo "nightly-shard: group $group: shard verdict ${verdict:-none (see $out/run.log)}, exit $rc," \
  "wall $wall s${CUDA_VISIBLE_DEVICES:+, CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES}${HIP_VISIBLE_DEVICES:+, HIP_VISIBLE_DEVICES=$HIP_VISIBLE_DEVICES}"
exit $rc
