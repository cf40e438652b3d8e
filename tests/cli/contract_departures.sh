#!/usr/bin/env bash
# A contract's departures from the reference numerics are named in every verdict judged by it,
# and where the contract came from is recorded (contracts §4.2, departures). A kernel whose
# adds round toward zero (tests/plugins/gt/gt_rz.c), discovered by `discover` (the file with
# its "# discovered by" line) and judged by it with `run --contract`, read PASS with nothing
# saying its rounding is not the reference's. Now: the closing line (even with --quiet), the
# verdict reason in results.json and summary.md say "PASS under a contract that rounds every
# add toward zero"; contract_sources says discovered / declared; ordered(1) names none.
. "$(dirname "$0")/common.sh.inc"

RZ="plugin:$P/liba4w4_gt_rz_plugin.so" REF="plugin:$P/liba4w4_ref_plugin.so"
"$CLI" discover --backend "$RZ" --out disc.txt --shapes 32x32x512 --repeats 2 --no-isolate \
  --quiet --no-evidence > /dev/null || fail "discover exit $?"
grep -q '^# discovered by' disc.txt && grep -q 'round=rz' disc.txt ||
  fail "discover did not write a round=rz contract: $(cat disc.txt)"
printf 'name,M,N,K,regime,seed,tags\na,4,32,2048,wide,1,\nb,8,64,1024,normal,2,\n' > c.csv

code "$CLI" run --cases c.csv --no-golden --quiet --out given --backend "$RZ,$REF" \
  --contract "$RZ=disc.txt"
[ "$rc" = 0 ] || { cat err.txt; fail "run --contract with the discovered file: exit $rc"; }
grep -q "^a4w4check run: PASS under a contract that rounds every add toward zero ($RZ)$" err.txt ||
  { cat err.txt; fail "the closing lines do not name the departure"; }
[ "$(grep -c 'under a contract' err.txt)" = 1 ] || { cat err.txt; fail "ordered(1) named a departure"; }
grep -q "PASS under a contract that rounds every add toward zero ($RZ: discovered by discover, given with --contract disc.txt)" given/summary.md ||
  fail "summary.md does not name the departure and the source"

code "$CLI" run --cases c.csv --no-golden --quiet --out declared --backend "$RZ"
[ "$rc" = 0 ] || { cat err.txt; fail "the declared contract: exit $rc"; }
# the ref plugin (RNE adds) judged under round=rz fails, and the failure names it too
code "$CLI" run --cases c.csv --no-golden --quiet --out failing --backend "$REF" \
  --contract "$REF=tree(round=rz)"
[ "$rc" = 1 ] || { cat err.txt; fail "ordered(1) judged by round=rz: exit $rc, expected 1"; }
grep -q "^a4w4check run: FAIL under a contract that rounds every add toward zero ($REF)$" err.txt ||
  { cat err.txt; fail "the failing run does not name the departure"; }

# a kernel truncating its fp32 total to bf16 (the classic bug; tests/plugins/gt/gt_finalrz.c),
# declaring tree(final=rz), passes bit for bit, and every verdict line says it truncates
FRZ="plugin:$P/liba4w4_gt_finalrz_plugin.so"
code "$CLI" run --cases c.csv --no-golden --quiet --out finalrz --backend "$FRZ"
[ "$rc" = 0 ] || { cat err.txt; fail "the truncating kernel under tree(final=rz): exit $rc"; }
grep -q "^a4w4check run: PASS under a contract that truncates the final bf16 rounding ($FRZ)$" err.txt ||
  { cat err.txt; fail "the truncating kernel's closing line does not name the departure"; }
grep -q "PASS under a contract that truncates the final bf16 rounding ($FRZ: declared by the backend)" finalrz/summary.md ||
  fail "summary.md does not name the truncation"
code "$CLI" run --cases c.csv --no-golden --quiet --out finalrz-ord --backend "$FRZ" \
  --contract "$FRZ=ordered(1)"
[ "$rc" = 1 ] || { cat err.txt; fail "the truncating kernel judged ordered(1): exit $rc, expected 1"; }

python3 - "$RZ" "$REF" <<'PY' || fail "results.json does not record them (above)"
import json, sys
rz, ref = sys.argv[1:]
bad = []
g = json.load(open("given/results.json"))
if g["contract_sources"] != {rz: "discovered by discover, given with --contract disc.txt",
                             ref: "declared by the backend"}:
    bad.append("given: contract_sources %r" % g["contract_sources"])
if g["contract_departures"] != {rz: "rounds every add toward zero"}:
    bad.append("given: contract_departures %r" % g.get("contract_departures"))
if "PASS under a contract that rounds every add toward zero" not in g["verdict_reason"]:
    bad.append("given: verdict_reason %r" % g["verdict_reason"])
d = json.load(open("declared/results.json"))
if d["contract_sources"] != {rz: "declared by the backend"} or rz not in d["contract_departures"]:
    bad.append("declared: %r %r" % (d["contract_sources"], d.get("contract_departures")))
f = json.load(open("failing/results.json"))
if f["contract_sources"] != {ref: "given with --contract (text)"}:
    bad.append("failing: %r" % f["contract_sources"])
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
echo "contract departures: named in every verdict, with the contract's source"
