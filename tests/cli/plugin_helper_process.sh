#!/usr/bin/env bash
# A plugin's helper process that outlives its call holds neither the --out lock nor the
# results stream (harness/io/fsutil.c a4w4_fd_keep_from_children: closed in every forked
# child), isolated or in-process. Reproducer (before the fix): `run --backend
# plugin:liba4w4_helper_plugin.so --out D`, then a second run into D -> refused, "D is in use
# by pid N" (N the first run, long gone: its helper kept the lock); the helper also kept
# D/results.jsonl open. Also after the harness is killed mid-run (kill -9): `run --resume`
# into D goes on.
. "$(dirname "$0")/common.sh.inc"
export A4W4_TEST_HELPER_PIDFILE=$WORK/helpers
: > helpers
trap 'while read -r p; do if kill "$p" 2>/dev/null; then :; fi; done < "$A4W4_TEST_HELPER_PIDFILE"' EXIT
{ echo "name,M,N,K,regime,seed,tags"; for i in 1 2 3 4 5; do echo "h$i,4,32,64,normal,$i,"; done; } > c.csv
run() { "$CLI" run --cases c.csv --no-golden --quiet --backend "plugin:$P/liba4w4_helper_plugin.so" "$@"; }

# holders DIR: the helpers (alive) that hold DIR's lock file or results.jsonl open
holders() {
  local p
  while read -r p; do
    [ -d "/proc/$p" ] || continue
    if ls -l "/proc/$p/fd" 2>/dev/null | grep -Eq "$1/(\.a4w4check\.lock|results\.jsonl)"; then echo "$p"; fi
  done < helpers
}

for mode in "" --no-isolate; do
  out=d${mode:+-inproc}
  run --out "$out" $mode || fail "${mode:-isolated}: first run exit $?"
  [ -s helpers ] || fail "${mode:-isolated}: the plugin started no helper"
  h=$(holders "$WORK/$out")
  [ -z "$h" ] || fail "${mode:-isolated}: helper(s) $h hold $out's lock or results.jsonl"
  set +e; run --out "$out" $mode 2> err.txt; rc=$?; set -e
  [ "$rc" = 0 ] || { cat err.txt; fail "${mode:-isolated}: the second run into $out: exit $rc"; }
  echo "${mode:-isolated}: helpers alive, no lock or results descriptor kept, rerun accepted"
done

# the harness killed mid-run while its helpers live: --resume goes on (each call 0.3 s here,
# A4W4_TEST_HELPER_SLOW, so that the kill comes between cases)
A4W4_TEST_HELPER_SLOW=1 "$CLI" run --cases c.csv --no-golden --quiet --backend "plugin:$P/liba4w4_helper_plugin.so" --out k --no-isolate & pid=$!
for _ in $(seq 100); do
  if [ -f k/results.jsonl ] && [ "$(grep -c '"case"' k/results.jsonl)" -ge 2 ]; then break; fi
  sleep 0.1
done
kill -9 "$pid"; set +e; wait "$pid" 2>/dev/null; set -e
set +e; run --out k --no-isolate --resume 2> err.txt; rc=$?; set -e
[ "$rc" = 0 ] || { cat err.txt; fail "--resume after kill -9: exit $rc, expected 0"; }
echo "plugin_helper_process: killed mid-run, --resume goes on"

# A helper left in the isolated call's process group (a plain fork, sleeping 60 s): the group is
# killed when the call ends, so `$(a4w4check ...)` (the helper held its stdout) returns at once
# and no helper is left; a timed-out call's helpers die with it. Reproducer (before): the
# command substitution waited 60 s for the helper; a timed-out call's helper ran on.
alive() { local p; while read -r p; do if [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then echo "$p"; fi; done < helpers; }
# a SIGKILLed process takes a moment to go on a loaded machine: wait up to 5 s, then name
# what is still alive (a helper left running keeps running far longer: it sleeps 60 s)
gone() { local i; for i in $(seq 50); do [ -n "$(alive)" ] || return 0; sleep 0.1; done; return 1; }
while read -r p; do if kill "$p" 2>/dev/null; then :; fi; done < helpers
: > helpers
t0=$(date +%s)
captured=$(A4W4_TEST_HELPER_MODE=group timeout 50 "$CLI" run --cases c.csv --no-golden \
  --backend "plugin:$P/liba4w4_helper_plugin.so" --out g 2>&1) || fail "group: exit $?"
t1=$(date +%s)
[ $((t1 - t0)) -lt 30 ] || fail "group: \$(a4w4check ...) took $((t1 - t0)) s: a helper held its stdout"
echo "$captured" | grep -q "0 failing entries" || fail "group: no verdict captured: $captured"
[ -s helpers ] || fail "group: the plugin started no helper"
gone || fail "group: helper(s) $(alive) outlived their isolated call"
: > helpers
set +e
A4W4_TEST_HELPER_MODE=group-hang timeout 50 "$CLI" run --cases c.csv --no-golden --quiet \
  --backend "plugin:$P/liba4w4_helper_plugin.so" --out gh --timeout 1 --max-timeouts 1 > /dev/null 2>&1
rc=$?
set -e
[ "$rc" != 124 ] || fail "group-hang: the run did not return"
[ -s helpers ] || fail "group-hang: the plugin started no helper"
gone || fail "group-hang: helper(s) $(alive) of timed-out calls still run"
echo "plugin_helper_process: an isolated call's process group goes with it (exit or timeout)"

# discover's runner: a helper it leaves in its process group goes when it exits (before, the
# command substitution waited for the helper's 40 s)
t0=$(date +%s)
set +e
captured=$(timeout 50 "$CLI" discover --backend bundle:ro --probes rp --shapes 24x8x512 \
  --runner 'sleep 40 & echo $! > runner_helper; exit 3; :' --out d.txt 2>&1)
set -e
t1=$(date +%s)
[ $((t1 - t0)) -lt 30 ] || fail "runner: \$(a4w4check discover ...) took $((t1 - t0)) s"
echo "$captured" | grep -q "the runner failed" || fail "runner: $captured"
h=$(cat runner_helper)
for _ in $(seq 50); do { [ ! -d "/proc/$h" ] || grep -q '^State:.*Z' "/proc/$h/status"; } && break; sleep 0.1; done
[ ! -d "/proc/$h" ] || grep -q '^State:.*Z' "/proc/$h/status" || fail "runner: its helper $h still runs"
echo "plugin_helper_process: discover's runner's helpers go with it"

# One fork-with-deadline (engine/isolate.c) for plugin calls and discover's runner: a helper
# left in the child's process group is gone after the deadline and after SIGTERM of a4w4check
# (the group is killed before the signal's own action). Reproducer (before): SIGTERM of a run
# whose isolated call hung left the call's helper running (only the call itself died with its
# parent); a runner's helper outlived a timed-out round.
# started FILE: wait (up to 10 s) until FILE names a live process
started() { local i; for i in $(seq 100); do [ -s "$1" ] && [ -d "/proc/$(head -n1 "$1")" ] && return 0; sleep 0.1; done; return 1; }
term_after_start() { # term_after_start PIDFILE CMD...: start CMD, SIGTERM it once PIDFILE names a helper
  "${@:2}" > /dev/null 2>&1 & local pid=$!
  started "$1" || { kill -9 "$pid"; fail "no helper started by: ${*:2}"; }
  kill -TERM "$pid"; set +e; wait "$pid"; trc=$?; set -e
}
: > helpers
A4W4_TEST_HELPER_MODE=group-hang term_after_start helpers timeout 50 "$CLI" run --cases c.csv \
  --no-golden --quiet --backend "plugin:$P/liba4w4_helper_plugin.so" --out gt --timeout 40
[ "$trc" = 143 ] || fail "run SIGTERMed: exit $trc, expected 143 (killed by SIGTERM)"
gone || fail "run SIGTERMed: helper(s) $(alive) of the hung call still run"
for how in deadline sigterm; do
  rm -f runner_helper
  args=(discover --backend bundle:ro-$how --probes rp-$how --shapes 24x8x512 --out d-$how.txt
        --runner 'sleep 40 & echo $! > runner_helper; wait; :')
  if [ $how = deadline ]; then
    set +e; timeout 50 "$CLI" "${args[@]}" --runner-timeout 1 > /dev/null 2> err.txt; rc=$?; set -e
    [ "$rc" = 5 ] && grep -q "the runner timed out" err.txt || fail "runner deadline: exit $rc, $(cat err.txt)"
  else
    term_after_start runner_helper timeout 50 "$CLI" "${args[@]}"
    [ "$trc" = 143 ] || fail "discover SIGTERMed: exit $trc, expected 143"
  fi
  h=$(cat runner_helper)
  for _ in $(seq 50); do { [ ! -d "/proc/$h" ] || grep -q '^State:.*Z' "/proc/$h/status"; } && break; sleep 0.1; done
  [ ! -d "/proc/$h" ] || grep -q '^State:.*Z' "/proc/$h/status" || fail "runner $how: its helper $h still runs"
done
echo "plugin_helper_process: helpers of a plugin call and of discover's runner go at the deadline and on SIGTERM"
