#!/usr/bin/env bash
# --shard i/n partitions the matrix (disjoint, complete); merge combines the shards into the
# report of an unsharded run and refuses shards of another matrix, a missing or a duplicate one.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
"$CLI" run --set edge --out "$WORK/all" --quiet
for i in 1 2 3; do "$CLI" run --set edge --shard $i/3 --out "$WORK/s$i" --quiet; done
names() { grep -o '"case":"[^"]*"' "$1/results.jsonl" | sort; }
cat <(names "$WORK/s1") <(names "$WORK/s2") <(names "$WORK/s3") | sort > "$WORK/union"
[ -z "$(sort "$WORK/union" | uniq -d)" ] || { echo "shards overlap"; exit 1; }
diff <(names "$WORK/all") "$WORK/union"          # complete
"$CLI" merge --out "$WORK/merged" "$WORK/s1" "$WORK/s2" "$WORK/s3"
# entries only (lower-case verdicts; the document's own verdict is upper case)
key() { grep -o '"name":[^,]*\|"backend":[^,]*\|"verdict":[[:space:]]*"[a-z/]*"\|"checked_outputs":[^,]*' "$1" | paste - - - - | sort; }
diff <(key "$WORK/all/results.json") <(key "$WORK/merged/results.json")

expect2() { set +e; "$@" 2> "$WORK/err"; rc=$?; set -e; [ $rc -eq 2 ] || { echo "exit $rc, expected 2: $*"; exit 1; }; }
expect2 "$CLI" merge --out "$WORK/m2" "$WORK/s1" "$WORK/s2"                   # missing shard 3
grep -q "shard 3/3 is missing" "$WORK/err"
expect2 "$CLI" merge --out "$WORK/m3" "$WORK/s1" "$WORK/s1" "$WORK/s3"        # duplicate
grep -q "given twice" "$WORK/err"
# another matrix: the edge set without its golden bundles, through one backend (a shard of the
# pre-merge set made the same point at tens of seconds)
"$CLI" run --set edge --no-golden --shard 2/3 --out "$WORK/other" --quiet --backend cpu-fallback
expect2 "$CLI" merge --out "$WORK/m4" "$WORK/s1" "$WORK/other" "$WORK/s3"     # another matrix
grep -q "differs" "$WORK/err"
[ ! -e "$WORK/m4/results.json" ]
# the budget is part of a run's identity: recorded, shown, and a shard run under another
# --budget-seconds is refused (the default is 60)
"$CLI" run --set edge --shard 2/3 --budget-seconds 5 --out "$WORK/b2" --quiet
head -n 1 "$WORK/b2/results.jsonl" | grep -q '"budget_seconds":[[:space:]]*5[,}]'
head -n 1 "$WORK/s2/results.jsonl" | grep -q '"budget_seconds":[[:space:]]*60[,}]'
grep -q "budget of 5 s of host checking" "$WORK/b2/summary.md"
"$CLI" report "$WORK/b2/results.json" --format html --out "$WORK/b2html" --quiet
grep -q "budget of 5 s of host checking" "$WORK/b2html/report.html"
expect2 "$CLI" merge --out "$WORK/m5" "$WORK/s1" "$WORK/b2" "$WORK/s3"        # another budget
grep -q "in 'budget_seconds'" "$WORK/err"
[ ! -e "$WORK/m5/results.json" ]
# with --full every output is checked whatever the budget: the budget is not part of the
# identity then (recorded 0), so --full shards run under different budgets merge
"$CLI" run --set edge --shard 1/2 --full --out "$WORK/f1" --quiet
"$CLI" run --set edge --shard 2/2 --full --budget-seconds 3 --out "$WORK/f2" --quiet
head -n 1 "$WORK/f2/results.jsonl" | grep -q '"budget_seconds":[[:space:]]*0[,}]'
"$CLI" merge --out "$WORK/fm" "$WORK/f1" "$WORK/f2" 2> "$WORK/err" ||
  { cat "$WORK/err"; echo "--full shards under two budgets refused"; exit 1; }
echo "shard + merge ok"
