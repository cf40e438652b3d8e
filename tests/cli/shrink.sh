#!/usr/bin/env bash
# `a4w4check shrink` (harness/commands/shrink.c): a failing case on a plugin (the selftest mutant
# mut-drop-kblock as the droptail plugin) shrinks to a smaller shape that still fails the same
# way, printed as a case-file line (DIR/minimal.csv) whose rerun fails, and to an operand
# bundle whose `run --bundle` repro fails and which `verify` re-checks; the output is the same
# on a second run (deterministic); --max-calls bounds it; a case that passes exits 1; a
# selftest mutant by name shrinks to its fault's shape (mut-rows-small-n keeps 2 rows, the
# smallest that shows "rows repeat row 0"); a case judged by --contract / --e8m0-code0 shrinks
# under them, and its printed reruns carry them and fail again (without them the case passes);
# bundle: and bad usage exit 2.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
fail() { echo "shrink: $*"; exit 1; }
# shellcheck source=lib/expect.sh
. "$SRC/tests/cli/lib/expect.sh"

cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
m33_n256_k1312,33,256,1312,normal,11,tail
m8_n64_k512,8,64,512,normal,12,notail
CSV

expect 0 "$CLI" shrink --backend "$DROP" --cases c.csv --case m33_n256_k1312 --out s1
cp out.txt s1.txt
grep -q "^shrink: m33_n256_k1312 on $DROP fails: one K block missing: block 40 (K elements 1280..1311, the last block" s1.txt ||
  { cat s1.txt; fail "the original's signature does not name the missing last K block"; }
grep -q "^shrink: [0-9]* runs; shape 33x256x1312 -> 1x1x32$" s1.txt || { cat s1.txt; fail "not shrunk to 1x1x32"; }
grep -qx "  m33_n256_k1312,1,1,32,normal,11,tail;shrunk" s1.txt || { cat s1.txt; fail "no case-file line"; }
grep -q "^operands left nonzero: K blocks 0 of 0..0; A rows 0 of 0..0; W rows 0 of 0..0" s1.txt ||
  { cat s1.txt; fail "no operands line"; }
grep -q "^signature: one K block missing: block 0 .*zero where a nonzero value is due" s1.txt ||
  { cat s1.txt; fail "the minimal case's signature"; }
grep -qx "m33_n256_k1312,1,1,32,normal,11,tail;shrunk" s1/minimal.csv || fail "s1/minimal.csv"
b="s1/m33_n256_k1312@plugin_liba4w4_droptail_plugin.so.safetensors"
[ -f "$b" ] || fail "no bundle $b"

# deterministic: the same output twice
expect 0 "$CLI" shrink --backend "$DROP" --cases c.csv --case m33_n256_k1312 --out s1
cmp -s out.txt s1.txt || { diff s1.txt out.txt; fail "a second shrink printed something else"; }

# both reruns fail again; verify re-checks the bundle
rerun=$(sed -n 's/^  rerun: a4w4check //p' s1.txt)
repro=$(sed -n 's/^repro: a4w4check //p' s1.txt)
# shellcheck disable=SC2086
expect 1 "$CLI" $rerun --quiet
# shellcheck disable=SC2086
expect 1 "$CLI" $repro --quiet
grep -q "FAIL golden/m33_n256_k1312@plugin_liba4w4_droptail_plugin.so on $DROP" out.txt ||
  { cat out.txt; fail "the bundle repro does not fail on the bundle"; }
expect 1 "$CLI" verify "$b"
grep -q "^FAIL .* recorded y_got: first mismatch at (0, 0)" out.txt || { cat out.txt; fail "verify"; }

# bounded: --max-calls 1 keeps the original shape
expect 0 "$CLI" shrink --backend "$DROP" --cases c.csv --case m33_n256_k1312 --out s2 --max-calls 1
grep -q "^shrink: 1 runs (--max-calls reached: smaller may exist); shape 33x256x1312 -> 33x256x1312" out.txt ||
  { cat out.txt; fail "--max-calls 1"; }

# judged by a stated contract: cpu-fallback (ordered(1)) fails a 12-bit rz tree on wide values
cat > w.csv <<'CSV'
name,M,N,K,regime,seed,tags
w_m33_n256_k1312,33,256,1312,wide,11,tail
CSV
tree='cpu-fallback=tree(leaf=1,fuse=16,prec=12,round=rz)'
expect 1 "$CLI" shrink --backend cpu-fallback --cases w.csv --case w_m33_n256_k1312 --out s5
grep -q "does not fail on cpu-fallback (pass)" out.txt || { cat out.txt; fail "w: pass without --contract"; }
expect 0 "$CLI" shrink --backend cpu-fallback --contract "$tree" --e8m0-code0 '2^-127' \
  --cases w.csv --case w_m33_n256_k1312 --out s5
cp out.txt s5.txt
grep -q "^shrink: [0-9]* runs; shape 33x256x1312 -> 1x1x" s5.txt || { cat s5.txt; fail "--contract: not shrunk"; }
# a one-ULP order difference is not blamed on a K block (a tiny block once "explained" it)
grep -q "one K block" s5.txt && { cat s5.txt; fail "an order difference attributed to a K block"; }
for line in rerun repro; do
  cmd=$(sed -n "s/^ *$line: a4w4check //p" s5.txt)
  grep -qF -- "--contract '$tree' --e8m0-code0 '2^-127'" <<<"$cmd" || { cat s5.txt; fail "$line lacks the contract"; }
  eval "expect 1 \"\$CLI\" $cmd --quiet"
done
# the saved bundle records the tree: verify recomputes y_expected by it and fails y_got
expect 1 "$CLI" verify "s5/w_m33_n256_k1312@cpu-fallback.safetensors"
grep -q "^PASS .* recorded y_expected (the contract's oracle) (1 checked); cpu-fallback, tree(" out.txt &&
  grep -q "^FAIL .* recorded y_got: first mismatch" out.txt || { cat out.txt; fail "verify of a tree bundle"; }
expect 2 "$CLI" shrink --backend cpu-fallback --contract 'cpu-asm=ordered(1)' --cases w.csv \
  --case w_m33_n256_k1312 --out s6
grep -q "contract 'cpu-asm=ordered(1)': must be B=FILE or B=TEXT with B one of the selected" out.txt ||
  { cat out.txt; fail "--contract of another backend"; }

# a case that does not fail, a mutant by name, bad usage
expect 1 "$CLI" shrink --backend "$DROP" --cases c.csv --case m8_n64_k512 --out s3
grep -q "^shrink: m8_n64_k512 does not fail on $DROP (pass)" out.txt || { cat out.txt; fail "pass case"; }
# an n/a case says n/a and why (reproducer, before: "does not fail on mut-rows-small-n (pass)")
expect 1 "$CLI" shrink --backend mut-rows-small-n --set edge --case e_n112 --out s7
grep -q "^shrink: e_n112 does not fail on mut-rows-small-n (n/a: .*N % 32 == 0" out.txt ||
  { cat out.txt; fail "n/a case"; }
expect 0 "$CLI" shrink --backend mut-rows-small-n --cases "$SRC/cases/selftest.csv" \
  --case st_m33_n64_k512 --out s4
grep -q "^shrink: [0-9]* runs; shape 33x64x512 -> 2x32x256$" out.txt || { cat out.txt; fail "mut-rows-small-n"; }
expect 2 "$CLI" shrink --backend bundle:s1 --cases c.csv --case m33_n256_k1312
grep -q "a bundle holds outputs computed once elsewhere" out.txt || { cat out.txt; fail "bundle:"; }
expect 2 "$CLI" shrink --backend "$DROP" --cases c.csv
expect 2 "$CLI" shrink --backend "$DROP" --cases c.csv --case nosuch
expect 2 "$CLI" shrink --backend "$DROP,cpu-asm" --cases c.csv --case m33_n256_k1312
echo "shrink ok"
