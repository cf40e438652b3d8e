#!/usr/bin/env bash
# run --keep-outputs DIR and compare of two such runs (harness/engine/kept_outputs.c,
# harness/cli/run_keep.c, harness/cli/compare_kept.c): every GEMM entry's outputs kept as
# DIR/<backend>/<case>.safetensors and recorded in results.json; compare of the run with itself
# under --pair cpu-asm=mut-splitk-bf16 gives per case the bit-equal and differing outputs,
# which this test recounts from the kept files with numpy (not with the code under test); a
# sampled case keeps nothing and compare names it with why; a run without kept outputs is
# named as such; a run whose outputs would pass --keep-outputs-max-mb is refused (exit 2)
# before anything is written.
# Needs Debian's python3 with numpy (ci/setup.sh installs it).
# Usage: run_keep_outputs.sh CLI SRC WORK TOOLS
set -u
CLI=$1 WORK=$3
PY=/usr/bin/python3
fail() { echo "run_keep_outputs: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
"$PY" -c 'import numpy' 2>/dev/null || { echo "run_keep_outputs: no numpy for $PY: skipped"; exit 77; }
cat > "$WORK/c.csv" <<'CSV'
name,M,N,K,regime,seed,tags
k_m8_n64_k768,8,64,768,normal,11,
k_m33_n64_k512,33,64,512,exact,12,
k_big,256,512,1024,normal,13,
CSV
run() { "$CLI" run --cases "$WORK/c.csv" --no-golden --budget-seconds 0 --quiet "$@" > /dev/null 2> "$WORK/err"; }
# k_big has 2^27 MACs: with --budget-seconds 0 it is sampled, so none of its outputs is kept
run --backend cpu-asm,mut-splitk-bf16 --out "$WORK/ra" --keep-outputs "$WORK/ka"
[ $? -eq 1 ] || fail "run with a mutant: exit not 1: $(cat "$WORK/err")"
for b in cpu-asm mut-splitk-bf16; do
  for c in k_m8_n64_k768 k_m33_n64_k512; do
    [ -s "$WORK/ka/$b/$c.safetensors" ] || fail "no kept output $b/$c"
  done
  [ ! -e "$WORK/ka/$b/k_big.safetensors" ] || fail "a sampled case's outputs kept"
done
"$PY" - "$WORK" <<'PY' || fail "results.json does not record the kept outputs"
import json, os, sys
w = sys.argv[1]
d = json.load(open(f"{w}/ra/results.json"))
k = d["kept_outputs"]
assert k["dir"] == os.path.realpath(f"{w}/ka"), k
for e in d["cases"]:
    if e["backend"] == "oracle":
        continue
    if e["name"] == "k_big":
        assert e["kept_output_missing"].startswith("sampled: "), e
    else:
        assert e["kept_output"] == f'{e["backend"]}/{e["name"]}.safetensors', e
PY
"$CLI" compare "$WORK/ra" "$WORK/ra" --pair cpu-asm=mut-splitk-bf16 --out "$WORK/cmp" 2> "$WORK/cerr"
grep -q "kept outputs: 2 entries compared, [12] with outputs that differ, 1 not compared" "$WORK/cerr" ||
  fail "compare's kept-outputs line: $(cat "$WORK/cerr")"
grep -q "^## Parity of the kept outputs" "$WORK/cmp/compare.md" || fail "no parity section in compare.md"
grep -q "k_big. on .cpu-asm.: BASE kept no output of it: sampled: " "$WORK/cmp/compare.md" ||
  fail "compare.md does not say why k_big was not compared: $(cat "$WORK/cmp/compare.md")"
grep -q "Parity of the kept outputs" "$WORK/cmp/compare.html" || fail "no parity section in compare.html"
"$PY" - "$WORK" <<'PY' || fail "the parity columns disagree with the kept files"
import json, struct, sys
import numpy as np
w = sys.argv[1]
def y(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    t = h["y"]
    lo, hi = t["data_offsets"]
    return np.frombuffer(b[8 + n + lo:8 + n + hi], dtype="<u2").reshape(t["shape"])
rows = json.load(open(f"{w}/cmp/compare.json"))["output_parity"]["rows"]
assert len(rows) == 2, rows
for r in rows:
    a = y(f"{w}/ka/cpu-asm/{r['name']}.safetensors")
    b = y(f"{w}/ka/mut-splitk-bf16/{r['name']}.safetensors")
    eq = int((a == b).sum())
    assert (r["outputs"], r["bit_equal"], r["differ"]) == (a.size, eq, a.size - eq), (r, eq)
    assert r["base_backend"] == "cpu-asm" and r["cand_backend"] == "mut-splitk-bf16"
    ids = [c["id"] for c in r["tolerance_on_difference"]]
    assert "aiter-checkallclose" in ids and "hipblaslt-unit-check" in ids, ids
    unit = [c for c in r["tolerance_on_difference"] if c["id"] == "hipblaslt-unit-check"][0]
    assert unit["outcome"] == ("PASS" if eq == a.size else "FAIL"), unit
assert any(r["differ"] > 0 for r in rows), rows
PY
# a run that kept nothing: named, nothing compared
run --backend cpu-asm --out "$WORK/rb"
[ $? -eq 0 ] || fail "plain run: exit not 0: $(cat "$WORK/err")"
"$CLI" compare "$WORK/ra" "$WORK/rb" --pair cpu-asm=cpu-asm --out "$WORK/cmp2" 2> "$WORK/cerr2"
grep -q "CAND kept no outputs (run --keep-outputs DIR keeps them)" "$WORK/cerr2" ||
  fail "a run without kept outputs is not named: $(cat "$WORK/cerr2")"
# over the limit: a case of 1024 x 1024 outputs through one GEMM backend takes 2 MiB, over 1
printf 'name,M,N,K,regime,seed,tags\nhuge,1024,1024,32,exact,1,\n' > "$WORK/h.csv"
"$CLI" run --cases "$WORK/h.csv" --no-golden --backend cpu-fallback --out "$WORK/rc" \
  --keep-outputs "$WORK/kc" --keep-outputs-max-mb 1 > /dev/null 2> "$WORK/err3"
[ $? -eq 2 ] || fail "over the limit: exit not 2"
[ "$(wc -l < "$WORK/err3")" -eq 1 ] && grep -q -- "--keep-outputs .* take up to 2.0 MiB, more than the limit of 1.0 MiB" "$WORK/err3" ||
  fail "over the limit: not one line naming size and limit: $(cat "$WORK/err3")"
# (run's planning makes --out before the check, as for any other refusal: it stays empty)
[ ! -e "$WORK/kc" ] && [ -z "$(ls -A "$WORK/rc" 2>/dev/null)" ] ||
  fail "over the limit, something was written"
echo "run_keep_outputs: ok"
