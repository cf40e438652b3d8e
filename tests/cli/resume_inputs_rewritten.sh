#!/usr/bin/env bash
# --resume and merge bind a run to the bytes of its inputs, not only their names (docs/cli/run.md,
# "Results, resume, shards"): a golden bundle (or --bundle file, or capture) rewritten under the
# same name changes matrix_hash, and a bundle:DIR whose files changed changes backend_files.
# Reproducer (before the fix): a run killed after its first items, then golden/g.safetensors
# replaced by another bundle, or an output in bundle:outs rewritten, then `run --resume`: PASS,
# the new bytes never judged on the items the old ones had passed; merge joined shards judged
# on different bytes.
. "$(dirname "$0")/common.sh.inc"
G="$SRC/cases/golden"
small_cases 4 > c.csv
mkdir gold
cp "$G/g1_m1_n256_k512.safetensors" gold/g.safetensors
run() { "$CLI" run --cases c.csv --golden gold --backend cpu-fallback --quiet "$@"; }
run --out whole || fail "the first run: exit $?"
run --shard 1/2 --out s1 || fail "shard 1: exit $?"
h1=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["matrix_hash"])' whole/results.json)

# the same name, other bytes (another golden bundle)
cp "$G/g4_m4_n128_k2048.safetensors" gold/g.safetensors
code run --out whole --resume
[ "$rc" = 2 ] || { cat err.txt; fail "--resume after a golden bundle was rewritten: exit $rc, expected 2"; }
grep -q "resume refused: the recorded run differs in 'matrix_hash'" err.txt ||
  { cat err.txt; fail "--resume: the refusal does not name matrix_hash"; }
[ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "--resume: more than one line"; }
run --shard 2/2 --out s2 || fail "shard 2: exit $?"
code "$CLI" merge --out m s1 s2
[ "$rc" = 2 ] || { cat err.txt; fail "merge of shards judged on two golden bundles: exit $rc"; }
grep -q "matrix_hash" err.txt || { cat err.txt; fail "merge: the refusal does not name matrix_hash"; }
[ ! -e m/results.json ] || fail "merge refused but wrote m/results.json"
run --out again || fail "a run of the rewritten bundle: exit $?"
h2=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["matrix_hash"])' again/results.json)
[ "$h1" != "$h2" ] || fail "matrix_hash $h1 for both contents"

# --bundle FILE: the same
cp "$G/g1_m1_n256_k512.safetensors" b.safetensors
"$CLI" run --bundle b.safetensors --backend cpu-fallback --quiet --out rb || fail "--bundle run: exit $?"
cp "$G/g4_m4_n128_k2048.safetensors" b.safetensors
code "$CLI" run --bundle b.safetensors --backend cpu-fallback --quiet --out rb --resume
[ "$rc" = 2 ] || { cat err.txt; fail "--resume after --bundle was rewritten: exit $rc, expected 2"; }

# bundle:DIR: its files are the outputs under test
"$CLI" run --cases c.csv --no-golden --backend cpu-fallback --keep-outputs kept --quiet --out k ||
  fail "--keep-outputs run: exit $?"
outs=kept/cpu-fallback
ls "$outs"/*.safetensors > /dev/null || fail "no kept outputs in $outs"
brun() { "$CLI" run --cases c.csv --no-golden --backend "bundle:$outs" --quiet "$@"; }
brun --out bw || fail "bundle run: exit $?"
grep -q "\"bundle:$outs\":[[:space:]]*\"[0-9a-f]\{16\}\"" bw/results.json ||
  fail "results.json records no backend_files hash of bundle:$outs"
brun --shard 1/2 --out b1 || fail "bundle shard 1: exit $?"
brun --out bw --resume || fail "--resume over the same outputs: exit $?"
first=$(ls "$outs"/*.safetensors | head -1)
printf 'x' >> "$first"   # an output rewritten in place
code brun --out bw --resume
[ "$rc" = 2 ] || { cat err.txt; fail "--resume after an output was rewritten: exit $rc, expected 2"; }
grep -q "resume refused: the files of bundle:$outs differ" err.txt ||
  { cat err.txt; fail "--resume: the refusal does not name the bundle directory"; }
[ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "--resume: more than one line"; }
code brun --shard 2/2 --out b2
code "$CLI" merge --out bm b1 b2
[ "$rc" = 2 ] || { cat err.txt; fail "merge of two bundle contents: exit $rc, expected 2"; }
grep -q "the files of bundle:$outs differ" err.txt || { cat err.txt; fail "merge: the refusal does not name the bundle"; }
echo "resume and merge refuse inputs rewritten under the same name"
