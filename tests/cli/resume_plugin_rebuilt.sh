#!/usr/bin/env bash
# --resume and merge bind a plugin's results to the library's bytes (the header's
# backend_files, harness/io/stream.c): results of one build are never kept or merged under
# another build of the same file name. Reproducer (before the fix): a run of plugin:./libx.so
# killed after its first cases, libx.so rebuilt wrong on those cases, then `run --resume`:
# PASS, the rebuilt library never called on the cases the first build had passed.
. "$(dirname "$0")/common.sh.inc"
small_cases 4 > c.csv
cp "$P/liba4w4_ref_plugin.so" libx.so
run() { "$CLI" run --cases c.csv --no-golden --no-call-sequence --backend plugin:./libx.so --quiet "$@"; }
run --out whole || fail "the first build: exit $?"
grep -q '"plugin:./libx.so":[[:space:]]*"[0-9a-f]\{16\}"' whole/results.json ||
  fail "results.json records no backend_files hash of libx.so"
run --shard 1/2 --out s1 || fail "shard 1: exit $?"

# another build under the same name: trailing bytes change the file, not what it computes
printf 'rebuilt' >> libx.so
code run --out whole --resume
[ "$rc" = 2 ] || { cat err.txt; fail "--resume after a rebuild: exit $rc, expected 2"; }
grep -q "resume refused: the files of plugin:./libx.so differ" err.txt ||
  { cat err.txt; fail "--resume: the refusal does not name the library"; }
[ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "--resume: more than one line"; }

run --shard 2/2 --out s2 || fail "shard 2: exit $?"
code "$CLI" merge --out m s1 s2
[ "$rc" = 2 ] || { cat err.txt; fail "merge of two builds: exit $rc, expected 2"; }
grep -q "the files of plugin:./libx.so differ" err.txt ||
  { cat err.txt; fail "merge: the refusal does not name the library"; }
[ ! -e m/results.json ] || fail "merge refused but wrote m/results.json"

# the same build resumes and merges as before
run --shard 1/2 --out s1b || fail "shard 1 of the rebuilt library: exit $?"
"$CLI" merge --out m s1b s2 2>/dev/null || fail "merge of one build: exit $?"
run --out s2 --shard 2/2 --resume || fail "--resume of the same build: exit $?"
echo "resume and merge refuse another build of a plugin library"
