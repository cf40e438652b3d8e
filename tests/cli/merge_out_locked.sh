#!/usr/bin/env bash
# merge takes --out's lock as run does (harness/cli/cmd_merge.c): a merge into a directory a
# run still writes is refused in one line, exit 2, and writes nothing there. Reproducer
# (before the fix): `merge --allow-partial --out S S` while the run of shard S was going wrote
# S/results.json and S/summary.md under it (exit 5), which the run then overwrote at its end.
. "$(dirname "$0")/common.sh.inc"
# z: M 1, judged; a: M 4, where the hang plugin sleeps (M > 1) until the run is killed
printf 'name,M,N,K,regime,seed,tags\nz,1,32,256,normal,1,\na,4,32,256,normal,2,\n' > c.csv
"$CLI" run --cases c.csv --no-golden --no-call-sequence --timeout 60 --budget-seconds 0 \
  --backend "plugin:$P/liba4w4_hang_plugin.so" --out s --quiet 2>/dev/null &
pid=$!
for _ in $(seq 1 600); do # the lock names its holder once the run has claimed s
  grep -q "^pid $pid:" s/.a4w4check.lock 2>/dev/null && break
  sleep 0.05
done
grep -q "^pid $pid:" s/.a4w4check.lock || { kill "$pid"; fail "the run never took s's lock"; }
sleep 0.5 # its header line written
code "$CLI" merge --allow-partial --out s s
kill "$pid"
set +e; wait "$pid" 2>/dev/null; set -e # ended by the kill: its exit code says nothing here
[ "$rc" = 2 ] || { cat err.txt; fail "merge into a running run's --out: exit $rc, expected 2"; }
[ "$(grep -c '^a4w4check: ' err.txt)" = 1 ] || { cat err.txt; fail "not one error line"; }
grep -q "merge: --out s is in use by pid $pid" err.txt || { cat err.txt; fail "the line does not name the run"; }
[ ! -e s/results.json ] && [ ! -e s/summary.md ] || fail "merge wrote into the running run's --out"
echo "merge refuses an --out a run holds"
