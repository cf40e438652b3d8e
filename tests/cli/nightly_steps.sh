#!/usr/bin/env bash
# The nightly's steps as the GitHub workflow and ci/nightly-gpu.sh run them: ci/nightly-shard.sh
# for G=3 groups as 3 concurrent processes (CPU backends, premerge set without the golden
# bundles), then ci/nightly-merge.sh: verdict PASS over every item of the matrix, each group
# used; and without one group's directory the merge refuses, naming the missing shard.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
export A4W4CHECK=$CLI
G=3
pids=()
for g in $(seq 1 $G); do
  bash ci/nightly-shard.sh --group "$g/$G" --out "$WORK/g$g" --set premerge \
    --backends cpu-fallback,cpu-asm -- --no-golden --e8m0-code0 2^-127 --budget-seconds 0 > "$WORK/g$g.out" 2>&1 &
  pids+=($!)
done
for g in $(seq 1 $G); do
  wait "${pids[$((g - 1))]}" || { cat "$WORK/g$g.out"; echo "group $g/$G failed"; exit 1; }
  grep -q "group $g/$G: shard verdict PASS, exit 0" "$WORK/g$g.out"
  # the group log shows the run's progress while it runs (nightly-gpu.sh's group-g.log)
  grep -q "^a4w4check run: \[1/[0-9]*\]" "$WORK/g$g.out" ||
    { cat "$WORK/g$g.out"; echo "group $g/$G: no progress line in its log"; exit 1; }
done
bash ci/nightly-merge.sh "$WORK/merged" "$WORK/g1" "$WORK/g2" "$WORK/g3"
doc=$WORK/merged/results.json
grep -q '"verdict":[[:space:]]*"PASS"' "$doc"
# every item of the matrix, counted from the case file itself (data rows but the header)
items=$(grep -v '^[[:space:]]*#' cases/premerge.csv | grep -c '[^[:space:]]')
items=$((items - 1))
[ "$items" -gt 3 ]
count() { grep -o "\"$1\":[[:space:]]*[0-9]*" "$2" | tail -n 1 | grep -o '[0-9]*$'; }
[ "$(count expected_items "$doc")" -eq "$items" ] || { echo "expected_items != $items"; exit 1; }
[ "$(count recorded_items "$doc")" -eq "$items" ] || { echo "recorded_items != $items"; exit 1; }
# one entry per item and backend: the oracle, cpu-fallback and cpu-asm
[ "$(count entries "$doc")" -eq $((3 * items)) ] || { echo "entries != 3 x $items"; exit 1; }
[ "$(grep -c '<testcase ' "$WORK/merged/junit.xml")" -eq $((3 * items)) ]
[ -s "$WORK/merged/summary.md" ] && [ -s "$WORK/merged/report.html" ]
# every group ran its own part of the matrix, and the groups' items add up
sum=0
for g in $(seq 1 $G); do
  n=$(count shard_items "$WORK/g$g/results.json")
  [ "$n" -gt 0 ] || { echo "group $g/$G ran no item"; exit 1; }
  sum=$((sum + n))
  grep -q "^| $g/$G | 0 | " "$WORK/merged/groups.md"
done
[ "$sum" -eq "$items" ]

# a group's directory lost (a job that never uploaded): refused, one line names the shard
set +e
bash ci/nightly-merge.sh "$WORK/partial" "$WORK/g1" "$WORK/g3" 2> "$WORK/err"
rc=$?
set -e
cat "$WORK/err"
[ $rc -eq 2 ] || { echo "merge without group 2: exit $rc, expected 2"; exit 1; }
[ "$(grep -c 'shard 2/3 is missing' "$WORK/err")" -eq 1 ]
[ ! -e "$WORK/partial/results.json" ] && [ ! -e "$WORK/partial/junit.xml" ]

# a group rerun into its old directory that stops before a verdict (an unknown set: exit 2)
# leaves no stale PASS there, and the merge refuses that group by its group.txt
cp -r "$WORK/g2" "$WORK/g2-rerun"
set +e
bash ci/nightly-shard.sh --group 2/3 --out "$WORK/g2-rerun" --set nosuchset \
  --backends cpu-fallback,cpu-asm -- --no-golden --budget-seconds 0 > "$WORK/rerun.out" 2>&1
rc=$?
bash ci/nightly-merge.sh "$WORK/stale" "$WORK/g1" "$WORK/g2-rerun" "$WORK/g3" 2> "$WORK/err"
mrc=$?
set -e
[ $rc -eq 2 ] || { cat "$WORK/rerun.out"; echo "shard on an unknown set: exit $rc, expected 2"; exit 1; }
grep -q "shard verdict none" "$WORK/rerun.out" || { cat "$WORK/rerun.out"; echo "stale verdict shown"; exit 1; }
[ ! -e "$WORK/g2-rerun/results.json" ] && [ ! -e "$WORK/g2-rerun/results.jsonl" ] ||
  { echo "the rerun left the earlier run's results"; exit 1; }
[ $mrc -eq 2 ] && grep -q "g2-rerun: its run exited 2" "$WORK/err" && [ ! -e "$WORK/stale/results.json" ] ||
  { cat "$WORK/err"; echo "merge took a group whose run exited 2: exit $mrc"; exit 1; }
# OUT is one of the groups' directories: refused, that group's documents untouched
set +e
bash ci/nightly-merge.sh "$WORK/g1" "$WORK/g1" "$WORK/g2" "$WORK/g3" 2> "$WORK/err"
mrc=$?
set -e
[ $mrc -eq 2 ] && grep -q "is the group directory" "$WORK/err" && [ -s "$WORK/g1/results.json" ] ||
  { cat "$WORK/err"; echo "merge into a group's own directory: exit $mrc"; exit 1; }
# a relative --out is the caller's, not the repository's; a group with a leading zero is refused
mkdir -p "$WORK/rel"
(cd "$WORK/rel" && bash "$SRC/ci/nightly-shard.sh" --group 1/40 --out here --set edge \
  --backends cpu-fallback -- --no-golden > "$WORK/rel.out" 2>&1) ||
  { cat "$WORK/rel.out"; echo "relative --out failed"; exit 1; }
[ -s "$WORK/rel/here/group.txt" ] && [ ! -e "$SRC/here" ] || { echo "relative --out misplaced"; exit 1; }
set +e
bash ci/nightly-shard.sh --group 01/2 --out "$WORK/z" 2> "$WORK/err"
rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l < "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; echo "--group 01/2: exit $rc"; exit 1; }

# the workflow's merge step itself (.github/workflows/nightly-gpu.yml, job merge), on the
# groups laid out as download-artifact lays them out, once complete and once without group 2
wf_step() { # the `run:` of the merge job's step whose name starts with "merge"
  /usr/bin/python3 -c 'import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))["jobs"]["merge"]
print(next(s["run"] for s in job["steps"] if s.get("name", "").startswith("merge")))' \
    .github/workflows/nightly-gpu.yml
}
wf_step > "$WORK/merge-step.sh"
for case in all partial; do
  w=$WORK/wf-$case
  mkdir -p "$w/groups"
  ln -s "$SRC/ci" "$w/ci"
  for g in 1 2 3; do
    [ "$case" = partial ] && [ $g = 2 ] && continue
    ln -s "$WORK/g$g" "$w/groups/nightly-group-$g"
  done
  set +e
  (cd "$w" && TOTAL=3 GITHUB_STEP_SUMMARY=$w/step-summary.md bash -e "$WORK/merge-step.sh") \
    > "$w/out" 2>&1
  rc=$?
  set -e
  echo "workflow merge step ($case): exit $rc"
  if [ $case = all ]; then
    [ $rc -eq 0 ] && grep -q '^\*\*Verdict: PASS\*\*' "$w/step-summary.md" &&
      grep -q '^| 3/3 | 0 |' "$w/step-summary.md" && [ -s "$w/merged/junit.xml" ] ||
      { cat "$w/out"; echo "workflow merge step failed on complete groups"; exit 1; }
  else
    [ $rc -eq 2 ] && grep -q 'group 2/3: no results uploaded' "$w/out" &&
      grep -q 'shard 2/3 is missing' "$w/step-summary.md" && [ ! -e "$w/merged/results.json" ] ||
      { cat "$w/out"; echo "workflow merge step did not refuse a missing group"; exit 1; }
  fi
done

# the host script: GPUS=2 x GROUPS_PER_GPU=2 groups, each pinned to its GPU, with stand-ins for
# the GPU check programs (no GPU here) and the CPU backends
mkdir -p "$WORK/bin"
ln -s "$CLI" "$WORK/bin/a4w4check"
for p in a4w4_gpu_emu a4w4_gpu_check; do
  printf '#!/bin/sh\necho "RESULT: stand-in %s"\n' "$p" > "$WORK/bin/$p"; chmod +x "$WORK/bin/$p"
done
# and for nvidia-smi: its -L, the compute capability, and utilization samples (GPU 0 at 80 %,
# GPU 1 at 20 %) until the script stops it
mkdir -p "$WORK/smi"
cat > "$WORK/smi/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
  -L) echo "GPU 0: stand-in"; echo "GPU 1: stand-in" ;;
  *compute_cap*) echo "9.0" ;;
  *utilization.gpu*) while :; do echo "0, 80"; echo "1, 20"; sleep 0.1; done ;;
esac
SMI
chmod +x "$WORK/smi/nvidia-smi"
env -u CUDA_VISIBLE_DEVICES PATH="$WORK/smi:$PATH" A4W4_GPU=nvidia GPUS=2 GROUPS_PER_GPU=2 \
  SET=edge E8M0_CODE0=2^-127 BACKENDS=cpu-fallback,cpu-asm REPORT_DIR="$WORK/host" \
  bash ci/nightly-gpu.sh --prebuilt "$WORK/bin"
for g in 1 2 3 4; do
  grep -q "group $g/4: shard verdict PASS, exit 0, wall [0-9]* s, CUDA_VISIBLE_DEVICES=$(( (g - 1) % 2 ))" \
    "$WORK/host/nightly.log"
done
grep -q '"verdict":[[:space:]]*"PASS"' "$WORK/host/run/merged/results.json"
grep -q "^| 2/4 | 0 | [0-9]* | [^|]* | CUDA 1 |" "$WORK/host/run/merged/groups.md"
grep -q "nightly-gpu: PASS" "$WORK/host/nightly.log"
# at the end: the harness step's wall, the merged stage table adding up, GPU utilization
python3 - "$WORK/host/nightly.log" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
assert re.search(r"nightly-gpu: harness wall [0-9]+ s", log), log
m = re.search(r"nightly-gpu: stages \(summed over the groups\): (.*) = ([0-9.]+) s \(other", log)
assert m, "no stage table at the end:\n" + log
parts = [float(x) for x in re.findall(r"(?:setup|generate|judge|backends|host oracles|record|"
                                      r"bundles|write|finish) ([0-9.]+) s", m.group(1))]
assert len(parts) == 9 and abs(sum(parts) - float(m.group(2))) <= 0.05 * 10, m.group(0)
for g, mean in (("0", 80), ("1", 20)):
    assert re.search(r"nightly-gpu: GPU %s utilization: mean %d %%, median %d %%" % (g, mean, mean),
                     log), "GPU %s utilization not summarised:\n%s" % (g, log)
assert log.rindex("utilization") < log.rindex("nightly-gpu: PASS"), "summary not at the end"
print("nightly-gpu.sh ends with the wall, the stage table and the GPU utilization")
PY
echo "nightly steps ok"
