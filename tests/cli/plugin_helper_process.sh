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

# the harness killed mid-run while its helpers live: --resume goes on
"$CLI" run --cases c.csv --no-golden --quiet --backend "plugin:$P/liba4w4_helper_plugin.so" --out k --no-isolate & pid=$!
for _ in $(seq 100); do
  if [ -f k/results.jsonl ] && [ "$(grep -c '"case"' k/results.jsonl)" -ge 2 ]; then break; fi
  sleep 0.1
done
kill -9 "$pid"; set +e; wait "$pid" 2>/dev/null; set -e
set +e; run --out k --no-isolate --resume 2> err.txt; rc=$?; set -e
[ "$rc" = 0 ] || { cat err.txt; fail "--resume after kill -9: exit $rc, expected 0"; }
echo "plugin_helper_process: killed mid-run, --resume goes on"
