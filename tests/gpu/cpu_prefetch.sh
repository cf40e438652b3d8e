#!/usr/bin/env bash
# The next case prepared ahead (a4w4_runner.prefetch) on the CPU stand-ins (a4w4check_cpu):
# while a case runs on the device path, a host thread generates the next case's operands and
# computes its host oracles. The results must be the same, entry by entry, as with each case
# prepared in turn (--no-prefetch), apart from times; the prefetch must have run (stages
# prefetch_s > 0; 0 with --no-prefetch) and the stage table still sum to the wall; a shard
# and a resumed run (which skip cases) must give the same entries too. The same with up to
# four cases prepared at once, each on a thread of its own (--prefetch-depth 4): the whole
# run, a shard and a resumed run.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
{ echo "name,M,N,K,regime,seed,tags"
  echo "p_exact,1,128,256,exact,7201,"
  echo "p_normal,4,256,512,normal,7202,"
  echo "p_special,2,128,256,special,7203,"
  echo "p_code0,3,128,256,code0,7204,"
  echo "p_wide,33,256,256,wide,7205,"
  echo "p_range,2,128,256,range,7206,"
  echo "p_bigk,1,256,16384,normal:ceil,7207,"
  echo "p_ceil,8,128,512,normal:round_down,7208,"
  echo "p_last,1,128,256,exact,7209,"; } >"$WORK/cases.csv"
B=hip-mma-32x128,hip-mma-256x256,hip-mma:dispatch,hip-mma-splitk,hip-mma-atomic,hip-mma-fallback,hip-layout,hip-quant
run() { local out=$1; shift
  "$CLI" run --e8m0-code0 2^-127 --cases "$WORK/cases.csv" --no-golden --backend "$B" \
    --out "$WORK/$out" --quiet "$@"; }
run ahead
run inturn --no-prefetch
run shard --shard 2/2
run deep --prefetch-depth 4
run deepshard --shard 2/2 --prefetch-depth 4
# a resumed run: the first two items recorded, the others run (the prefetch skips recorded ones)
for r in resumed:1 deepres:4; do
  run "${r%%:*}" --prefetch-depth "${r##*:}"
  head -3 "$WORK/${r%%:*}/results.jsonl" >"$WORK/part" && mv "$WORK/part" "$WORK/${r%%:*}/results.jsonl"
  run "${r%%:*}" --resume --prefetch-depth "${r##*:}"
done
python3 - "$WORK" <<'PY'
import json, sys
W = sys.argv[1]
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, "tests/gpu")
import results_entries
def entries(name):
    return results_entries.entries("%s/%s" % (W, name))
ahead_doc, ahead = entries("ahead")
inturn_doc, inturn = entries("inturn")
assert len(ahead) == 9 * 9 and ahead.keys() == inturn.keys(), (len(ahead), len(inturn))
for k in ahead:
    assert ahead[k] == inturn[k], "entry %s differs:\n%s\n%s" % (k, ahead[k], inturn[k])
s, t = ahead_doc["stages"], inturn_doc["stages"]
assert s["prefetch_s"] > 0, "the next case was never prepared ahead: %s" % s
assert t["prefetch_s"] == 0, "--no-prefetch prepared ahead: %s" % t
assert s["other_s"] <= 0.02 * s["wall_s"], "stages do not add up: %s" % s
assert ahead_doc["verdict"] == inturn_doc["verdict"]
deep_doc, deep = entries("deep")
assert deep.keys() == inturn.keys() and deep_doc["stages"]["prefetch_s"] > 0, len(deep)
for k in deep:
    assert deep[k] == inturn[k], "depth 4: entry %s differs:\n%s\n%s" % (k, deep[k], inturn[k])
assert deep_doc["stages"]["other_s"] <= 0.02 * deep_doc["stages"]["wall_s"], deep_doc["stages"]
for name in ("shard", "resumed", "deepshard", "deepres"):
    _, part = entries(name)
    assert part, name
    for k in part:
        assert part[k] == ahead[k], "%s: entry %s differs" % (name, k)
for name in ("resumed", "deepres"):
    _, res = entries(name)
    assert len(res) == len(ahead), "%s: %d entries" % (name, len(res))
print("prefetched run: %d entries as in turn; prefetch %.2f s beside a %.2f s wall"
      % (len(ahead), s["prefetch_s"], s["wall_s"]))
PY
echo "prefetch on the CPU stand-ins: PASS"
