#!/usr/bin/env bash
# A bounded(S) contract that cannot fail judges nothing (contracts §4.1, the strength of a
# bound). At 8x64x65536 the bound of bounded(65536) (256 bf16 partials, 255 bf16 adds) is
# larger than the answer on every output: a plugin writing +0 everywhere and one negating every
# output (tests/plugins/ref_plugin.c ZERO_OUT, NEGATE_OUT) both passed it, exit 0. Now each
# such entry is skip ("not judged: ... admits 0"), its outputs counted not judged, the run
# INCOMPLETE (exit 5); at K = 2048 the same contract is strong (above 0.9) and catches both;
# a correct kernel judged bounded(1) at K = 2048 passes with its strength shown.
. "$(dirname "$0")/common.sh.inc"

cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
big,8,64,65536,normal,1,
CSV
cat > small.csv <<'CSV'
name,M,N,K,regime,seed,tags
small,8,64,2048,normal,2,
CSV

for p in zeroout negate; do
  code "$CLI" run --cases c.csv --no-golden --quiet --out "$p-big" \
    --backend "plugin:$P/liba4w4_${p}_plugin.so"
  [ "$rc" = 5 ] || { cat err.txt; fail "$p at K=65536: exit $rc, expected 5 (INCOMPLETE)"; }
  grep -q 'verdict INCOMPLETE: .*not judged: the bounded(65536) bound admits 0' err.txt ||
    { cat err.txt; fail "$p at K=65536: the verdict line does not say why"; }
  code "$CLI" run --cases small.csv --no-golden --quiet --out "$p-small" \
    --backend "plugin:$P/liba4w4_${p}_plugin.so"
  [ "$rc" = 1 ] || { cat err.txt; fail "$p at K=2048: exit $rc, expected 1"; }
done
code "$CLI" run --cases small.csv --no-golden --quiet --out ref-small \
  --backend "plugin:$P/liba4w4_ref_plugin.so" --contract "plugin:$P/liba4w4_ref_plugin.so=bounded(1)"
[ "$rc" = 0 ] || { cat err.txt; fail "the reference plugin under bounded(1): exit $rc"; }

python3 - <<'PY' || fail "the results do not say what they must (above)"
import json, sys
bad = []
def entry(d):
    doc = json.load(open(d + "/results.json"))
    es = [e for e in doc["cases"] if e["backend"].startswith("plugin:")]
    return doc, es[0]
for p in ("zeroout", "negate"):
    doc, e = entry(p + "-big")
    if doc["verdict"] != "INCOMPLETE" or e["verdict"] != "skip" or e["bound_strength"] >= 0.5 \
            or e["bound_vacuous"] != 512 or e["judged_in_bound"] != 0 or e["not_judged"] != 512:
        bad.append("%s big: %s %s strength %s vacuous %s judged %s/%s" % (p, doc["verdict"],
                   e["verdict"], e["bound_strength"], e["bound_vacuous"], e["judged_in_bound"],
                   e["not_judged"]))
    if "| bounded(65536) | skip |" not in open(p + "-big/summary.md").read():
        bad.append("%s big: summary.md has no bounded row with the verdict" % p)
    doc, e = entry(p + "-small")
    if e["verdict"] != "fail" or e["bound_strength"] <= 0.9:
        bad.append("%s small: %s strength %s" % (p, e["verdict"], e["bound_strength"]))
doc, e = entry("ref-small")
if e["verdict"] != "pass" or not 0.9 < e["bound_strength"] <= 1 or e["judged_in_bound"] != 512:
    bad.append("ref small: %s strength %s" % (e["verdict"], e.get("bound_strength")))
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
echo "bounded strength: the vacuous bounds judge nothing (INCOMPLETE), the strong ones judge"
