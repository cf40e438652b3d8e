#!/usr/bin/env bash
# ci/nightly-merge.sh — the nightly's merge + report step (ci/nightly-gpu.sh, the GitHub
# workflow's merge job, tests/cli/nightly_steps.sh): `a4w4check merge` of the shard groups'
# directories (ci/nightly-shard.sh --out), which refuses shards of another matrix, set,
# backend list, budget or version, a duplicate and a missing group; then the reports.
#
# Usage: ci/nightly-merge.sh OUT GROUP_DIR...
# Writes OUT/results.json and OUT/summary.md (merge), OUT/junit.xml and OUT/report.html
# (`a4w4check report`, when merge wrote a document), OUT/groups.md (one row per group from its
# group.txt: exit, wall seconds, host, devices: the groups' balance), OUT/known-failures.csv
# (cases/known-failures.csv with last_matched updated from tonight's run: `a4w4check known
# --touch`) and OUT/merge.log.
# Env: A4W4CHECK (default build/a4w4check).
# Exit: merge's exit code (0 all pass, 1 failures, 2 shards refused, 4 not written, 5
# incomplete); 2 also for bad usage; 4 when merge passed but a report could not be written.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${A4W4CHECK:-$root/build/a4w4check}
[ $# -ge 2 ] || { echo "usage: ci/nightly-merge.sh OUT GROUP_DIR..." >&2; exit 2; }
out=$1; shift
[ -x "$cli" ] || { echo "nightly-merge: A4W4CHECK=$cli: not an executable a4w4check" >&2; exit 2; }
mkdir -p "$out" || exit 4
for d in "$@"; do  # OUT must not be a group's own directory (its documents would be replaced),
  # under any name: -ef compares the directories themselves, symlinks resolved
  if [ "$d" -ef "$out" ]; then
    echo "nightly-merge: OUT $out is the group directory $d: merge into another directory" >&2
    exit 2
  fi
done
# no stale verdict survives a refused merge
rm -f "$out/results.json" "$out/summary.md" "$out/junit.xml" "$out/report.html"
# refuse before merging: every group's run must have ended with a verdict (group.txt exit 0, 1 or 5): a run that stopped on bad usage, a
# missing GPU or an unwritten result (2, 3, 4) left nothing current to merge
for d in "$@"; do
  e=$(sed -n 's/^exit=//p' "$d/group.txt" 2>/dev/null | head -n 1)
  case "$e" in
    0|1|5|"") ;;
    *) echo "nightly-merge: group $d: its run exited $e (see $d/run.log): nothing merged" >&2
       exit 2 ;;
  esac
done
# the groups' balance, also when merge refuses them
{
  echo "| group | exit | wall s | host | devices | dir |"
  echo "|---|---:|---:|---|---|---|"
  for d in "$@"; do
    f=$d/group.txt
    get() { sed -n "s/^$1=//p" "$f" 2>/dev/null | head -n 1; }
    if [ -f "$f" ]; then
      dev=$(get cuda_visible_devices); dev=${dev:+CUDA $dev}
      hip=$(get hip_visible_devices); dev="$dev${dev:+${hip:+, }}${hip:+HIP $hip}"
      echo "| $(get group) | $(get exit) | $(get wall_s) | $(get host) | ${dev:-(all)} | $d |"
    else
      echo "| ? | ? | ? | ? | ? | $d (no group.txt) |"
    fi
  done
} >"$out/groups.md"
"$cli" merge --out "$out" "$@" 2>"$out/merge.log"
rc=$?
cat "$out/merge.log" >&2
case $rc in
  0|1|5)
    for fmt in junit html; do
      if ! "$cli" report "$out/results.json" --format "$fmt" --out "$out" --quiet \
           >>"$out/merge.log" 2>&1; then
        echo "nightly-merge: report --format $fmt failed (see $out/merge.log)" >&2
        [ $rc -eq 0 ] && rc=4
      fi
    done
    # the known-failures ledger with last_matched moved to tonight for every entry tonight
    # matched (commit it back: an entry that matches nothing for 30 days shows as stale)
    if [ -f "$root/cases/known-failures.csv" ] &&
       ! "$cli" known --ledger "$root/cases/known-failures.csv" --touch "$out" \
         --out "$out/known-failures.csv" >>"$out/merge.log" 2>&1; then
      echo "nightly-merge: known --touch failed (see $out/merge.log)" >&2
      [ $rc -eq 0 ] && rc=4
    fi
    verdict=$(grep -o '"verdict":[[:space:]]*"[A-Z]*"' "$out/results.json" | tail -n 1 | grep -o '[A-Z]*')
    echo "nightly-merge: $# groups merged: verdict ${verdict:-unknown}, exit $rc; $out/summary.md, $out/junit.xml" >&2
    ;;
  *) echo "nightly-merge: merge refused the groups (exit $rc): nothing merged" >&2 ;;
esac
exit $rc
