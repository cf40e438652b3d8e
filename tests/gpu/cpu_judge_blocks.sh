#!/usr/bin/env bash
# The device judge in blocks of rows (a4w4check_cpu, the CPU stand-ins): when a case's judge
# arrays exceed the judge's ceiling (A4W4_JUDGE_MEM_BYTES here, free device memory on a GPU),
# every output is still judged on the device, a block of rows at a time, with the same entries
# as the whole case's. Four cases (M 37, 21, 33, 17: none a multiple of its block, so each has
# a last short block) through an ordered(1), an ordered(4), the bf16-atomic split-K (held to
# its declared atomic(4), then to bounded(4)) and one held to exact; a ceiling of 140,000 bytes gives blocks of 8, 13, 9 and 14 rows. Each run is made
# whole and in blocks, clean and with a planted wrong output in a later block (the last output
# of every ASM GEMM, A4W4_GPU_CPU_FAULT=gemm; one output of the bf16-atomic split-K in the
# middle row, =atomic-one): every field of every entry but times must be equal (the oracle
# entry's note says the blocks in one clause more), the planted outputs found at their row and
# column. A ceiling below one row fails the case's oracle entry
# with one line naming the case and the bytes (exit 1), as does a malformed ceiling.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
{ echo "name,M,N,K,regime,seed,tags"
  echo "b_normal,37,256,512,normal,7301,"
  echo "b_special,21,256,256,special,7302,"
  echo "b_wide,33,256,256,wide,7303,"
  echo "b_exact,17,256,512,exact,7304,"; } >"$WORK/cases.csv"
B=hip-mma-32x128,hip-mma-splitk,hip-mma-atomic,hip-mma-64x256
run() { # out fault atomic-contract [env...]; prints the exit status
  local out=$1 fault=$2 ac=$3; shift 3
  set +e
  env A4W4_GPU_CPU_FAULT="$fault" A4W4_JUDGE_CPU_OPENS="$WORK/$out.opens" "$@" \
    "$CLI" run --e8m0-code0 2^-127 --cases "$WORK/cases.csv" --no-golden --backend "$B" \
    --contract hip-mma-64x256=exact --contract "hip-mma-atomic=$ac" --out "$WORK/$out" --quiet >"$WORK/$out.log" 2>&1
  echo $?
  set -e
}
# bounded(4) keeps 8 bytes an output more for the whole case (its ULPs), atomic(4) none: a
# ceiling each that cuts every case into blocks
declare -A CEIL=([atomic]=A4W4_JUDGE_MEM_BYTES=45000 [bounded]=A4W4_JUDGE_MEM_BYTES=140000)
for ac in 'atomic(4)' 'bounded(4)'; do
  for f in none gemm atomic-one; do
    t=${ac%%(*}-$f
    w=$(run "whole-$t" "$f" "$ac") b=$(run "blocks-$t" "$f" "$ac" "${CEIL[${ac%%(*}]}")
    # clean: INCOMPLETE (5), b_wide's outputs outside the exact regime leave the exact-held
    # entry not judged (contracts §4.1); planted: a failure (1)
    want=$([ "$f" = none ] && echo 5 || echo 1)
    [ "$w" = "$want" ] && [ "$b" = "$want" ] ||
      { cat "$WORK/blocks-$t.log"; echo "fault $t: exit $w whole, $b in blocks, expected $want"; exit 1; }
  done
done
tiny=$(run tiny none 'atomic(4)' A4W4_JUDGE_MEM_BYTES=1000)
badv=$(run badv none 'atomic(4)' A4W4_JUDGE_MEM_BYTES=12x)
nofree=$(run nofree none 'atomic(4)' A4W4_JUDGE_CPU_FREE=1000)
# The judge reserves what the GEMM runs use, not more (docs/gpu.md, "The device judge's memory"): the
# matrix units' ordered(4) split-K uses one fp32 accumulator (4 bytes an output), not the
# portable kernel's four splits (16). One case of M=1 (n = 4096 outputs) with free memory of
# the headroom (1/16 of the stand-in's 80 GiB) + 22n: the runs' outputs, pad variant and
# workspace (8n, with buf_get's room at most 10n) and the judge's 12 bytes an output fit; a
# reservation of 16n for the workspace leaves less than one row: "does not fit the device".
echo "name,M,N,K,regime,seed,tags" >"$WORK/ws.csv"
echo "w_split,1,4096,1024,normal,7305," >>"$WORK/ws.csv"
set +e
A4W4_JUDGE_CPU_FREE=$(( (80 << 30) / 16 + 22 * 4096 + 64 )) "$CLI" run --e8m0-code0 2^-127 \
  --cases "$WORK/ws.csv" --no-golden --backend hip-mma-splitk --out "$WORK/wsfree" --quiet \
  >"$WORK/wsfree.log" 2>&1
wsfree=$?
set -e
[ "$wsfree" = 0 ] || { cat "$WORK/wsfree.log"; echo "wsfree: exit $wsfree, expected 0 (the judge"\
  " reserved more workspace than hip-mma-splitk uses)"; exit 1; }
python3 - "$WORK" "$tiny" "$badv" "$nofree" <<'PY'
import json, sys
W, tiny, badv, nofree = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
TIMES = {"time_ms", "run_ms", "cost_ms", "prep_generate_ms", "prep_oracles_ms", "date"}
ROWS = {"b_normal": 37, "b_special": 21, "b_wide": 33, "b_exact": 17}
# bounded: 8 bytes an output of the whole case's ULPs first, then 37 bytes an output of a block
# of rows; atomic: 20 bytes an output of a block, 8 rows of 256 in 45,000 bytes
BLOCKS = {"bounded": {"b_normal": (5, 8), "b_special": (2, 13), "b_wide": (4, 9),
                      "b_exact": (2, 14)},
          "atomic": {"b_normal": (5, 8), "b_special": (3, 8), "b_wide": (5, 8),
                     "b_exact": (3, 8)}}
def entries(name):
    d = json.load(open("%s/%s/results.json" % (W, name)))
    out = {}
    for e in d["cases"]:
        e = {k: v for k, v in e.items() if k not in TIMES}
        if e["backend"] == "oracle" and name.startswith("blocks"): # the one clause that differs
            clause = "; judged in %d blocks of up to %d rows (the judge's memory ceiling)" % \
                BLOCKS[name.split("-")[1]][e["name"]]
            assert clause in e["note"], (name, e["name"], e["note"])
            e["note"] = e["note"].replace(clause, "")
        out[(e["name"], e["backend"])] = e
    return out
for t in ("%s-%s" % (c, f) for c in ("atomic", "bounded") for f in ("none", "gemm", "atomic-one")):
    ac, f = t.split("-", 1)
    whole, blocks = entries("whole-" + t), entries("blocks-" + t)
    assert len(whole) == 4 * 5 and whole.keys() == blocks.keys(), (len(whole), len(blocks))
    for k in whole:
        assert whole[k] == blocks[k], "%s: entry %s differs:\n%s\n%s" % (f, k, whole[k], blocks[k])
    opens, rows = map(int, open("%s/blocks-%s.opens" % (W, t)).read().split())
    wopens, wrows = map(int, open("%s/whole-%s.opens" % (W, t)).read().split())
    assert rows <= 14 and opens > 4 * 4, "not judged in blocks: %d opens, %d rows" % (opens, rows)
    assert wrows == 37 and wopens == 4, "the whole run: %d opens, %d rows" % (wopens, wrows)
    for (case, b), e in blocks.items():
        if b != "oracle" and e["contract"] != "exact": # exact: the host sample
            assert e["checked_outputs"] == ROWS[case] * 256, (case, b, e)
    if f == "none":
        fails = [k for k, e in blocks.items() if e["verdict"] == "fail"
                 and e["contract"] != "exact"]
        assert not fails, fails
        atomic = blocks[("b_normal", "hip-mma-atomic")]
        assert atomic["contract"] == ac + "(4)", atomic
        if ac == "bounded":
            assert atomic["bound_ulp_median"] > 0 and atomic["judged_in_bound"] == 37 * 256, atomic
        else:
            assert atomic["verdict"] == "pass" and atomic["checked_outputs"] == 37 * 256, atomic
    want = {"gemm": ("hip-mma-32x128", 36, 255), "atomic-one": ("hip-mma-atomic", 18, 129)}
    if f in want:
        b, r, c = want[f]
        e = blocks[("b_normal", b)]
        first = e["first_mismatches"][0]
        assert e["verdict"] == "fail" and e["mismatches"] == 1, e
        assert (first["row"], first["col"]) == (r, c), first
def oracle_notes(name):
    d = json.load(open("%s/%s/results.json" % (W, name)))
    return [e for e in d["cases"] if e["backend"] == "oracle"]
for name, rc, text in (("tiny", tiny, "does not fit the device: the judge needs at least"),
                       ("badv", badv, "A4W4_JUDGE_MEM_BYTES=12x: not a byte count"),
                       ("nofree", nofree, "free device memory less the outputs")):
    assert rc == "1", "%s: exit %s, expected 1" % (name, rc)
    for e in oracle_notes(name):
        assert e["verdict"] == "fail" and text in e["note"], (name, e["note"])
    print("%s: %s" % (name, oracle_notes(name)[0]["note"][:200]))
ws = {e["backend"]: e for e in json.load(open(W + "/wsfree/results.json"))["cases"]}
assert ws["oracle"]["verdict"] == "pass" and "blocks" not in ws["oracle"]["note"], ws["oracle"]
assert ws["hip-mma-splitk"]["verdict"] == "pass", ws["hip-mma-splitk"]
assert ws["hip-mma-splitk"]["checked_outputs"] == 4096, ws["hip-mma-splitk"]
print("judged in blocks: every entry as the whole case's, clean and with planted outputs")
PY
echo "device judge in blocks on the CPU stand-ins: PASS"
