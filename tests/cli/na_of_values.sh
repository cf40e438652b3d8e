#!/usr/bin/env bash
# Not applicable is a property of the shape (harness/backends/a4w4_plugin.h "Return codes").
# The plugin (tests/plugins/ref_plugin.c NA_ON_VALUES) computes ordered(1) but answers n/a
# ("shape not supported") whenever a scale lies outside 110..140: on wide data it was n/a and
# the run passed (exit 0; on the edge set 13 of its 36 entries, every wide, special and code-0
# case). Now the harness calls it again on the same shape with constant operands; it computes
# them, so its n/a hides outputs: the entry fails (exit 1) and says why. The same shape on
# exact-regime data passes, and cpu-asm's n/a on a shape without the ASM layouts (N = 8)
# stays n/a.
. "$(dirname "$0")/common.sh.inc"

cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
easy,4,32,256,exact,1,
hard,4,32,256,wide,2,
n8,7,8,256,exact,3,
CSV
code "$CLI" run --cases c.csv --no-golden --quiet --out r \
  --backend "plugin:$P/liba4w4_navalues_plugin.so,cpu-asm"
[ "$rc" = 1 ] || { cat err.txt; fail "exit $rc, expected 1"; }
python3 - <<'PY' || fail "the results do not say what they must (above)"
import json
doc = json.load(open("r/results.json"))
es = {(e["name"], e["backend"].split(":")[0]): e for e in doc["cases"]}
bad = []
def want(key, verdict, text=""):
    e = es[key]
    if e["verdict"] != verdict or text not in e.get("note", ""):
        bad.append("%s: %s (%s), expected %s %r" % (key, e["verdict"], e.get("note"), verdict, text))
want(("easy", "plugin"), "pass")
want(("hard", "plugin"), "fail", "shape not supported; n/a on these operands, yet the backend "
     "computed the same shape and outputs with constant ones")
want(("n8", "cpu-asm"), "n/a")
want(("easy", "cpu-asm"), "pass")
want(("hard", "cpu-asm"), "pass")  # the operands were put back after the constant call
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "na_of_values: an n/a that depends on the values fails; one of the shape stays n/a"
