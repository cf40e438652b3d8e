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
echo "a rule after an unconditional one is refused, naming the file, line and rule"
