#!/usr/bin/env bash
# exact judges the exact regime only (contracts §4.1): an entry with outputs outside it is not
# judged, never a pass. The plugin (tests/plugins/ref_plugin.c EXACT_ZERO_OFF) declares exact,
# computes ordered(1) inside the exact regime and writes +0 outside it: on a wide case with
# outputs on both sides it passed (exit 0, "PASS (bit-exact where judged)"), and a wide case
# with none inside was n/a. Now: each such entry is skip, the run INCOMPLETE (exit 5); an
# exact-regime case still passes; held to ordered(1) the same plugin fails (exit 1).
. "$(dirname "$0")/common.sh.inc"

cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
both,32,64,256,wide,1,
outside,16,192,1024,wide,17,
inside,4,32,256,exact,2,
CSV
B="plugin:$P/liba4w4_exactzero_plugin.so"
code "$CLI" run --cases c.csv --no-golden --quiet --out r --backend "$B"
[ "$rc" = 5 ] || { cat err.txt; fail "declared exact: exit $rc, expected 5 (INCOMPLETE)"; }
grep -q 'verdict INCOMPLETE: .*so the entry is not judged' err.txt ||
  { cat err.txt; fail "the verdict line does not say why"; }
python3 - <<'PY' || fail "the results do not say what they must (above)"
import json
doc = json.load(open("r/results.json"))
es = {e["name"]: e for e in doc["cases"] if e["backend"].startswith("plugin:")}
bad = []
for name, want in (("both", "skip"), ("outside", "skip"), ("inside", "pass")):
    e = es[name]
    if e["verdict"] != want or e["mismatches"]:
        bad.append("%s: %s, %s mismatches, expected %s" % (name, e["verdict"], e["mismatches"], want))
    if want == "skip" and "so the entry is not judged" not in e.get("note", ""):
        bad.append("%s: note %r" % (name, e.get("note")))
if not (es["both"]["judged_bit_exact"] > 0 and es["both"]["not_judged"] > 0):
    bad.append("both: the case must have outputs on both sides: %s" % es["both"])
if es["outside"]["judged_bit_exact"] != 0 or es["inside"]["not_judged"] != 0:
    bad.append("outside/inside: %s %s" % (es["outside"], es["inside"]))
if doc["verdict"] != "INCOMPLETE":
    bad.append("document verdict %s" % doc["verdict"])
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
code "$CLI" run --cases c.csv --no-golden --quiet --out o --backend "$B" --contract "$B=ordered(1)"
[ "$rc" = 1 ] || { cat err.txt; fail "held to ordered(1): exit $rc, expected 1"; }
echo "exact_unjudged: outputs outside the exact regime leave the entry not judged (exit 5)"
