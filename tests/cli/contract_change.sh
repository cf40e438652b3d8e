#!/usr/bin/env bash
# A contract change is named, never called a fix (contracts §4.2, departures): the same bits of
# a kernel one bf16 ULP off on row 0 (tests/plugins/ref_plugin.c BREAK_ROW0), judged
# ordered(1) (FAIL) and then bounded(65536) (PASS), read "NO NEW FAILURE, 1 fixed" in
# `compare`, the change not mentioned; `merge` of shards judged under different --contract
# texts read PASS under one contract. Now compare counts no fix, names the change per backend
# (stderr, compare.md, compare.json) and lists the entry as a verdict change "not a fix";
# merge refuses the shards (exit 2, one line).
. "$(dirname "$0")/common.sh.inc"
BAD="plugin:$P/liba4w4_bad_plugin.so" REF="plugin:$P/liba4w4_ref_plugin.so"
printf 'name,M,N,K,regime,seed,tags\na,4,32,2048,normal,1,\n' > c.csv

code "$CLI" run --cases c.csv --no-golden --quiet --out base --backend "$BAD"
[ "$rc" = 1 ] || { cat err.txt; fail "base (ordered(1)): exit $rc, expected 1"; }
code "$CLI" run --cases c.csv --no-golden --quiet --out cand --backend "$BAD" \
  --contract "$BAD=bounded(65536)"
[ "$rc" = 0 ] || { cat err.txt; fail "cand (bounded(65536)): exit $rc, expected 0"; }
code "$CLI" compare base cand --out cmp --format all
grep -q '0 fixed' err.txt || { cat err.txt; fail "compare called the weaker contract a fix"; }
# 2 entries: case a's and its call sequence's (docs/backends.md "Call sequences")
grep -q "^a4w4check compare: contract changed for $BAD: ordered(1) -> bounded(65536) (2 entries" err.txt ||
  { cat err.txt; fail "compare does not name the contract change"; }
grep -q '## Contract changes' cmp/compare.md || fail "compare.md has no contract changes"
python3 - <<'PY' || fail "compare.json does not say it (above)"
import json, sys
c = json.load(open("cmp/compare.json"))
ok = (c["totals"]["fixed"] == 0 and c["totals"]["contract_changes"] == 1
      and c["contract_changes"][0]["base"] == "ordered(1)"
      and c["contract_changes"][0]["cand"] == "bounded(65536)"
      and "not a fix" in c["verdict_changes"][0]["why"])
print("" if ok else json.dumps({k: c[k] for k in ("totals", "contract_changes", "verdict_changes")}))
sys.exit(0 if ok else 1)
PY

small_cases 4 > s.csv
code "$CLI" run --cases s.csv --no-golden --quiet --out s1 --shard 1/2 --backend "$REF"
code "$CLI" run --cases s.csv --no-golden --quiet --out s2 --shard 2/2 --backend "$REF" \
  --contract "$REF=bounded(1)"
code "$CLI" merge s1 s2 --out merged
[ "$rc" = 2 ] || { cat err.txt; fail "merge of shards under other contracts: exit $rc, expected 2"; }
[ "$(wc -l < err.txt)" = 1 ] && grep -q "judged $REF under contract 'bounded(1)'" err.txt ||
  { cat err.txt; fail "merge's refusal is not one line naming the contracts"; }
[ ! -e merged/results.json ] || fail "merge wrote a document anyway"
echo "contract change: compare names it and counts no fix; merge refuses the shards"
