#!/usr/bin/env bash
# A rule after an unconditional one can never match (the first rule that holds is a shape's
# contract, contracts §4.2 "The file form"): refused, exit 2, one line naming the file (or the
# plugin declaring the rules), the line and the rule. Reproducer (before the fix): `run
# --contract B=FILE` with "ordered(1)" on line 1 and "when K>=4096: ordered(2)" on line 2 judged
# every shape by ordered(1) and said nothing of line 2; a plugin declaring such a set was refused
# as "not one of ordered(1), ..." without naming the rule.
. "$(dirname "$0")/common.sh.inc"
small_cases 2 > c.csv
run() { "$CLI" run --cases c.csv --no-golden --no-call-sequence --quiet "$@"; }
one_line() { [ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "$1: more than one line"; }; }

printf '# the big-K split\nordered(1)\n\nwhen K>=4096: ordered(2)\n' > dead.txt
code run --backend cpu-fallback --contract cpu-fallback=dead.txt --out r1
[ "$rc" = 2 ] || { cat err.txt; fail "run --contract dead.txt: exit $rc, expected 2"; }
grep -q "contract file dead.txt: line 4: rule 'when K>=4096: ordered(2)' can never match: line 2" err.txt ||
  { cat err.txt; fail "run --contract: the refusal does not name the file, line and rule"; }
one_line "run --contract"
[ ! -e r1/results.json ] || fail "refused, but r1/results.json was written"

# the same rules declared by a plugin (the example's contract replaced)
sed 's/"my-gemm", "ordered(1)"/"my-gemm", "when Mpad<=32: ordered(1)\\nordered(1)\\nwhen M>=1: exact"/' \
  "$SRC/examples/plugin/my_gemm.c" > dead.c
grep -q 'when M>=1: exact' dead.c || fail "the example's contract line was not found"
${CC:-cc} -shared -fPIC -O2 -ffp-contract=off -I"$SRC/harness/backends" dead.c -o libdead.so -lm
code run --backend plugin:./libdead.so --out r2
[ "$rc" = 2 ] || { cat err.txt; fail "a plugin declaring an unreachable rule: exit $rc, expected 2"; }
grep -q "plugin ./libdead.so: declared rule set (contracts §4.2): line 3: rule 'when M>=1: exact' can never match: line 2" err.txt ||
  { cat err.txt; fail "plugin: the refusal does not name the plugin, line and rule"; }
one_line "plugin"

# rules that can all match are taken as before
printf 'when K>=4096: ordered(2)\nordered(1)\n' > ok.txt
run --backend cpu-fallback --contract cpu-fallback=ok.txt --out r3 || fail "ok.txt: exit $?"

# A predicate no shape satisfies (M, N >= 1, K a positive multiple of 32, Mpad a padded-M
# bucket of contracts §5.1) is refused at parse time by every reader: one line naming the file,
# the line, the predicate and why, exit 2, no results file. Reproducer (before the fix): `run
# --contract B=FILE` with `when Mpad==17: exact` (or Mpad<=0, K%32==5, M<=0) was accepted and
# its rule never applied: every shape judged by the next rule.
export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
for pred in 'Mpad==17' 'Mpad<=0' 'K%32==5' 'M<=0' 'Mpad == 272' 'K==33' 'N<1'; do
  printf '# dead predicate\nwhen %s: exact\nordered(1)\n' "$pred" > pred.txt
  code run --backend cpu-fallback --contract cpu-fallback=pred.txt --out rp
  [ "$rc" = 2 ] || { cat err.txt; fail "run --contract with '$pred': exit $rc, expected 2"; }
  grep -qF "contract file pred.txt: line 2: predicate '$pred' holds for no shape: " err.txt ||
    { cat err.txt; fail "run --contract: the refusal of '$pred' does not name the file, line and predicate"; }
  one_line "run --contract '$pred'"
  [ ! -e rp/results.json ] || fail "'$pred' refused, but rp/results.json was written"
done
printf 'when K%%32==5: exact\n' > k.txt
code run --backend cpu-fallback --contract cpu-fallback=k.txt --out rk
grep -q "holds for no shape: K is a positive multiple of 32" err.txt || { cat err.txt; fail "K%32==5: the refusal does not say why"; }
printf 'when Mpad==17: exact\n' > k.txt
code run --backend cpu-fallback --contract cpu-fallback=k.txt --out rk
grep -q "holds for no shape: Mpad, getPaddedM(M, N, K, 0) of contracts §5.1, is 16, 32" err.txt ||
  { cat err.txt; fail "Mpad==17: the refusal does not say why"; }
printf 'when Mpad==17: exact\nordered(1)\n' > pred.txt

# shrink reads --contract the same way (refused before any call)
code "$CLI" shrink --backend cpu-fallback --cases c.csv --case a --contract cpu-fallback=pred.txt --out sh
[ "$rc" = 2 ] || { cat err.txt; fail "shrink --contract: exit $rc, expected 2"; }
grep -q "pred.txt: line 1: predicate 'Mpad==17' holds for no shape" err.txt ||
  { cat err.txt; fail "shrink --contract: the refusal does not name the file, line and predicate"; }

# a bundle's contract.txt: refused before anything runs, naming the file and the predicate
"$CLI" run --cases c.csv --no-golden --backend cpu-fallback --keep-outputs kept --quiet --out k ||
  fail "--keep-outputs run: exit $?"
printf '# discovered by hand\nwhen Mpad==17: exact\nordered(1)\n' > kept/cpu-fallback/contract.txt
code run --backend bundle:kept/cpu-fallback --out rb
[ "$rc" = 2 ] || { cat err.txt; fail "bundle contract.txt with Mpad==17: exit $rc, expected 2"; }
grep -q "kept/cpu-fallback/contract.txt.*line 2: predicate 'Mpad==17' holds for no shape" err.txt ||
  { cat err.txt; fail "bundle contract.txt: the refusal does not name the file and predicate"; }
one_line "bundle contract.txt"

# the Python side: external --contract FILE refuses it before the kernel runs
"$CLI" export --cases c.csv --no-golden --out ops --quiet > /dev/null || fail "export: exit $?"
cat > kern.py <<'PY'
def gemm(*args, **kw):
    raise SystemExit("the kernel ran")
PY
code env PYTHONPATH="$PYTHONPATH:$WORK" /usr/bin/python3 -m a4w4check.external --ops ops --out ext \
  --kernel kern:gemm --contract pred.txt
[ "$rc" = 2 ] || { cat err.txt; fail "external --contract pred.txt: exit $rc, expected 2"; }
grep -q "contract file pred.txt: line 1: predicate 'Mpad==17' holds for no shape" err.txt ||
  { cat err.txt; fail "external: the refusal does not name the file, line and predicate"; }
if grep -q "the kernel ran" err.txt out.txt; then fail "external ran the kernel before refusing"; fi

# every contract file of the repository is accepted (discover's own files are parsed in its
# tests through contract_text --file)
find "$SRC" \( -name '.git' -o -name 'build*' \) -prune -o \
  \( -name '*.contract' -o -name 'contract.txt' \) -type f -print > files.txt
[ -s files.txt ] || fail "no contract file found under $SRC (tests/plugins/gt/gt_splits.contract is one)"
while IFS= read -r f; do
  "$TOOLS/contract_text" --file "$f" > /dev/null || fail "$f: refused"
  /usr/bin/python3 -c 'import sys; from a4w4check import contract; contract.resolve(sys.argv[1])' \
    "$f" || fail "$f: refused by a4w4check.contract.resolve"
done < files.txt
echo "a rule after an unconditional one, and a predicate no shape reaches, are refused, naming the file, line and rule"
