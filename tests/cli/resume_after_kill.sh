#!/usr/bin/env bash
# A run killed in the middle (SIGKILL) resumes with --resume to the same final report as an
# uninterrupted run: no case lost but the one in flight, none run twice.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
# timings and dates differ run to run; the stages are this process's own (a resumed run's
# cover only the cases it ran)
strip() { grep -v -E '"(time_ms|run_ms|cost_ms|prep_[a-z]+_ms|date|[a-z_]+_s|outputs_device|outputs_host|oracle_outputs)"' "$1"; }

"$CLI" run --set premerge --no-golden --budget-seconds 0 --out "$WORK/clean" --quiet

"$CLI" run --set premerge --no-golden --budget-seconds 0 --out "$WORK/killed" --quiet &
pid=$!
for _ in $(seq 1 6000); do   # wait until at least 12 cases are recorded
  n=$(wc -l < "$WORK/killed/results.jsonl" 2>/dev/null || echo 0)
  [ "$n" -ge 13 ] && break
  kill -0 "$pid" 2>/dev/null || { echo "run ended before it could be killed"; exit 1; }
  sleep 0.05
done
kill -9 "$pid"
set +e; wait "$pid" 2>/dev/null; rc=$?; set -e
[ "$rc" -eq 137 ] || { echo "the killed run ended with exit $rc, expected 137 (SIGKILL)"; exit 1; }
recorded=$(($(wc -l < "$WORK/killed/results.jsonl") - 1))
echo "killed after $recorded recorded cases"
[ ! -e "$WORK/killed/results.json" ] || { echo "results.json must not exist after a kill"; exit 1; }

# a resume against another matrix is refused
printf 'name,M,N,K,regime,seed,tags\nx,1,32,64,exact,1,\n' > "$WORK/other.csv"
set +e
"$CLI" run --cases "$WORK/other.csv" --no-golden --out "$WORK/killed" --resume --quiet 2> "$WORK/refused.err"
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "resume against another matrix: exit $rc, expected 2"; exit 1; }
grep -q "resume refused" "$WORK/refused.err"

"$CLI" run --set premerge --no-golden --budget-seconds 0 --out "$WORK/killed" --resume 2> "$WORK/resume.err"
grep -q "resuming: $recorded cases already recorded" "$WORK/resume.err"
diff <(strip "$WORK/clean/results.json") <(strip "$WORK/killed/results.json")
diff <(grep -v -e '| [0-9.]* |  *$' -e '^| date (UTC) |' -e '^Outputs compared:' "$WORK/clean/summary.md" | sed 's/| [0-9]*\.[0-9] |/|/') \
     <(grep -v -e '| [0-9.]* |  *$' -e '^| date (UTC) |' -e '^Outputs compared:' "$WORK/killed/summary.md" | sed 's/| [0-9]*\.[0-9] |/|/')
# every case exactly once
n=$(grep -c '"case"' "$WORK/killed/results.jsonl")
m=$(grep -c '^[a-z]' "$SRC/cases/premerge.csv"); m=$((m - 1))
[ "$n" -eq "$m" ] || { echo "results.jsonl has $n cases, the matrix $m"; exit 1; }
echo "resume after kill: same report"
