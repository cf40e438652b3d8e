#!/usr/bin/env bash
# Never a PASS over missing data (results.json's verdict, contracts §4.1):
#   - two runs into one --out: the second exits 2 naming the first's pid and command line,
#     and the first's results are its own, complete and PASS;
#   - a shard killed mid-way: merge refuses it (exit 2, one line: the shard and its counts);
#     --allow-partial merges it as INCOMPLETE (exit 5), never PASS; resumed, it merges PASS;
#   - a backend that compares nothing (bundle:EMPTY_DIR; a plugin answering "not applicable"
#     to every case): verdict INCOMPLETE, exit 5, the reason on one line;
#   - temporary files a killed writer left in --out are removed by the next run, and only
#     those (the writer's own names).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
fail() { echo "run_integrity: $*"; exit 1; }
rc_of() { set +e; "$@" > "$WORK/out" 2> "$WORK/err"; echo $? > "$WORK/rc"; set -e; cat "$WORK/rc"; }
one_line() { [ "$(wc -l < "$WORK/err")" -eq 1 ] || fail "stderr is not one line: $(cat "$WORK/err")"; }
field() { # field FILE KEY: a top-level string field of a results.json
  sed -n "s/^	\"$2\":	\"\\(.*\\)\",\$/\\1/p" "$1"
}

# 1. two runs into one --out
"$CLI" run --e8m0-code0 2^-127 --set premerge --no-golden --budget-seconds 0 --out "$WORK/one" --quiet &
first=$!
for _ in $(seq 1 2000); do
  [ -s "$WORK/one/results.jsonl" ] && break
  kill -0 "$first" 2>/dev/null || fail "the first run ended before the second could start"
  sleep 0.01
done
rc=$(rc_of "$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --out "$WORK/one" --quiet)
[ "$rc" -eq 2 ] || fail "second run into a busy --out: exit $rc, expected 2"
one_line
grep -q "run: --out $WORK/one is in use by pid $first: a4w4check run --e8m0-code0 2^-127 --set premerge --no-golden --budget-seconds 0 --out $WORK/one --quiet" "$WORK/err" ||
  fail "the refusal does not name the holder: $(cat "$WORK/err")"
echo "concurrent run: $(cat "$WORK/err")"
set +e; wait "$first"; rc=$?; set -e
[ "$rc" -eq 0 ] || fail "the first run: exit $rc, expected 0"
[ "$(field "$WORK/one/results.json" verdict)" = PASS ] || fail "the first run is not PASS"
cases=$(($(grep -c '^[A-Za-z0-9]' cases/premerge.csv) - 1))   # minus the header
grep -q "\"recorded_items\":	$cases," "$WORK/one/results.json" || fail "the first run lost items"
! grep -q '"name":	"e_' "$WORK/one/results.json" || fail "the second run's cases got in"
# the lock dies with its holder: the next run into the directory goes ahead
rc=$(rc_of "$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend cpu-fallback --out "$WORK/one" --quiet)
[ "$rc" -eq 0 ] || fail "a run after the first ended: exit $rc, expected 0"

# 2. a shard killed mid-way, then merged
"$CLI" run --e8m0-code0 2^-127 --set premerge --no-golden --budget-seconds 0 --shard 1/2 --out "$WORK/s1" --quiet
"$CLI" run --e8m0-code0 2^-127 --set premerge --no-golden --budget-seconds 0 --shard 2/2 --out "$WORK/s2" --quiet &
pid=$!
for _ in $(seq 1 6000); do
  n=$(wc -l < "$WORK/s2/results.jsonl" 2>/dev/null || echo 0)
  [ "$n" -ge 6 ] && break
  kill -0 "$pid" 2>/dev/null || fail "shard 2 ended before it could be killed"
  sleep 0.01
done
kill -9 "$pid"
set +e; wait "$pid" 2>/dev/null; rc=$?; set -e
[ "$rc" -eq 137 ] || fail "the killed shard: exit $rc, expected 137"
got=$(($(wc -l < "$WORK/s2/results.jsonl") - 1))
rc=$(rc_of "$CLI" merge --out "$WORK/m" "$WORK/s1" "$WORK/s2")
[ "$rc" -eq 2 ] || fail "merge of a killed shard: exit $rc, expected 2"
one_line
n1=$(grep -o '"recorded_items":[[:space:]]*[0-9]*' "$WORK/s1/results.json" | grep -o '[0-9]*$')
n2=$((cases - n1))
grep -q "merge: $WORK/s2: $got of $n2 items recorded (header shard_items $n2)" "$WORK/err" ||
  fail "merge refusal: $(cat "$WORK/err")"
echo "killed shard: $(cat "$WORK/err")"
[ ! -e "$WORK/m/results.json" ] || fail "a refused merge wrote results.json"
rc=$(rc_of "$CLI" merge --allow-partial --out "$WORK/mp" "$WORK/s1" "$WORK/s2")
[ "$rc" -eq 5 ] || fail "merge --allow-partial: exit $rc, expected 5"
[ "$(field "$WORK/mp/results.json" verdict)" = INCOMPLETE ] || fail "partial merge is not INCOMPLETE"
[ "$(field "$WORK/mp/results.json" verdict_reason)" = "$((n1 + got)) of $cases expected items recorded" ] ||
  fail "partial merge reason: $(field "$WORK/mp/results.json" verdict_reason)"
grep -q "merge: verdict INCOMPLETE: $((n1 + got)) of $cases expected items recorded" "$WORK/err"
grep -q '^\*\*Verdict: INCOMPLETE\*\*' "$WORK/mp/summary.md"
echo "killed shard, --allow-partial: $(tail -n 1 "$WORK/err")"
# a missing shard: refused, or INCOMPLETE with --allow-partial
rc=$(rc_of "$CLI" merge --allow-partial --out "$WORK/m1" "$WORK/s1")
[ "$rc" -eq 5 ] || fail "merge --allow-partial of one shard of two: exit $rc, expected 5"
# resumed, the shard is complete and the merge passes
"$CLI" run --e8m0-code0 2^-127 --set premerge --no-golden --budget-seconds 0 --shard 2/2 --out "$WORK/s2" --quiet --resume
rc=$(rc_of "$CLI" merge --out "$WORK/m" "$WORK/s1" "$WORK/s2")
[ "$rc" -eq 0 ] || fail "merge after --resume: exit $rc, expected 0"
[ "$(field "$WORK/m/results.json" verdict)" = PASS ] || fail "the resumed merge is not PASS"

# 3. a backend that compares nothing
mkdir -p "$WORK/empty"
rc=$(rc_of "$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "bundle:$WORK/empty" --out "$WORK/e" --quiet)
[ "$rc" -eq 5 ] || fail "bundle:EMPTY_DIR: exit $rc, expected 5"
one_line
grep -q "run: verdict INCOMPLETE: backend bundle:$WORK/empty made no comparison (every entry n/a or skip)" "$WORK/err" ||
  fail "empty bundle: $(cat "$WORK/err")"
echo "empty bundle directory: $(cat "$WORK/err")"
[ "$(field "$WORK/e/results.json" verdict)" = INCOMPLETE ] || fail "empty bundle is not INCOMPLETE"
grep -q '^\*\*Verdict: INCOMPLETE\*\*' "$WORK/e/summary.md"
# a plugin that answers "not applicable" to every case, beside a backend that compares
cat > "$WORK/na.c" <<'EOF'
#include <stdio.h>
#include "a4w4_plugin.h"
static int gemm(void *state, const a4w4_plugin_gemm_args *a)
{
    (void)state;
    snprintf(a->msg, a->msglen, "this plugin applies to nothing");
    return A4W4_PLUGIN_NOT_APPLICABLE;
}
static const a4w4_plugin_info info = {A4W4_PLUGIN_ABI_VERSION, "na-plugin", "ordered(1)", 0,
                                      NULL, gemm, NULL};
A4W4_PLUGIN_EXPORT const a4w4_plugin_info *a4w4_plugin_query(void) { return &info; }
EOF
cc -shared -fPIC -I"$SRC/harness/backends" -o "$WORK/libna.so" "$WORK/na.c"
rc=$(rc_of "$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "cpu-fallback,plugin:$WORK/libna.so" --out "$WORK/na" --quiet)
[ "$rc" -eq 5 ] || fail "an all-n/a plugin: exit $rc, expected 5"
grep -q "backend plugin:$WORK/libna.so made no comparison" "$WORK/err" || fail "n/a plugin: $(cat "$WORK/err")"
grep -q "\"backends_unchecked\":	\[\"plugin:$WORK/libna.so\"\]" "$WORK/na/results.json" ||
  fail "counts.backends_unchecked does not name the plugin"

# 4. a killed writer's temporary files: removed by the next run, and nothing else
mkdir -p "$WORK/t"
stale="results.json.tmpAb12Cd summary.md.tmpZZ9zz0 results.jsonl.tmp"
keep="results.json.tmpAb12Cdx results.json.tmp12345 notes.tmpAb12Cd results.json.tmp-1234 mine.txt"
for f in $stale $keep; do echo x > "$WORK/t/$f"; done
mkdir "$WORK/t/summary.md.tmpDIRDIR"
rc=$(rc_of "$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend cpu-fallback --out "$WORK/t")
[ "$rc" -eq 0 ] || fail "run into a directory with stale temporary files: exit $rc"
grep -q "removed 3 temporary files a killed run left in $WORK/t" "$WORK/err" || fail "no notice: $(cat "$WORK/err")"
for f in $stale; do [ ! -e "$WORK/t/$f" ] || fail "$f was not removed"; done
for f in $keep summary.md.tmpDIRDIR; do [ -e "$WORK/t/$f" ] || fail "$f was removed"; done
echo "run integrity ok"
