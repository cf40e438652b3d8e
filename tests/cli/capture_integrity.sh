#!/usr/bin/env bash
# A capture is judged or refused, never passed unjudged (contracts §7.1). Each block below
# reproduces one false PASS or raw print of `verify` / `run --captures` (captures written with
# numpy by a4w4check.bundle, y the exact answer of python/tests/helpers.py):
#   1. a gemm_a4w4 capture with a bias and a garbage y -> exit 2 (was: "0 passed, 0 failed,
#      1 n/a", exit 0); alpha 0, beta 1, a bpreshuffle flag the recorded weight contradicts,
#      gemm_afp4wfp4 with dtype float16 or skip_reduce True, a quantizer whose shuffle flag
#      contradicts its scale -> exit 2 each (were PASS: the fields were ignored);
#   2. y (and a quantizer's x) stored at an odd offset of the data section: read through an
#      aligned copy (was a misaligned uint16_t read, a UBSan abort in the sanitizer build);
#   3. an op holding a newline and ESC: the refusal is one line with '?' for them (was printed
#      raw over two lines, the ESC reaching the terminal);
#   4. run --captures on an empty directory -> INCOMPLETE, exit 5 (was PASS); captures in a
#      subdirectory are found and judged: a wrong one fails, exit 1 (was PASS, none judged);
#      a capture with a bias -> exit 2 (was PASS over an n/a entry); a capture file name
#      holding a newline -> exit 2, one line.
# Usage: capture_integrity.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "capture_integrity: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
export PYTHONPATH="$SRC/python:$SRC/python/tests" PYTHONDONTWRITEBYTECODE=1
"$PY" - "$WORK" <<'PY' || fail "cannot write the captures"
import os, sys
import numpy as np
from a4w4check import bundle
from a4w4check import safetensors_codec as codec
from helpers import exact_y, random_operands

work = sys.argv[1]
# scales 125..129: every output in the exact regime, so the correct capture (declared exact)
# is judged on all of them; one outside it would leave the entry not judged (contracts §4.1)
ops = random_operands(np.random.default_rng(5), 3, 32, 64, scales=(125, 129))
y = exact_y(ops)
GEMM = {"call_site": "t.py:1", "layer": "l", "contract": "exact", "layouts": "",
        "bpreshuffle": "False", "alpha": "1.0", "beta": "0.0"}


def cap(d, op="aiter.gemm_a4w4", extra=None, meta=None, yy=y):
    t = dict(ops, y=codec.Raw("BF16", yy))
    t.update(extra or {})
    m = dict(GEMM if op == "aiter.gemm_a4w4" else
             {"call_site": "t.py:1", "layer": "l", "contract": "exact", "layouts": ""})
    m.update(meta or {})
    os.makedirs(os.path.join(work, d), exist_ok=True)
    bundle.save_capture(os.path.join(work, d), op, (3, 32, 64), t, m)


cap("good")
cap("bias", extra={"bias": np.zeros((3, 32), np.float32)}, yy=y ^ 0x5555)
cap("alpha", meta={"alpha": "0.0"})
cap("beta", meta={"beta": "1.0"})
cap("preshuffle", meta={"bpreshuffle": "True"})
cap("dtype", op="aiter.gemm_afp4wfp4", meta={"dtype": "torch.float16"})
cap("skipreduce", op="aiter.gemm_afp4wfp4", meta={"skip_reduce": "True"})
cap("sub/deeper", yy=y ^ 0x0001)                       # a wrong y, one level down
os.makedirs(os.path.join(work, "sub/deeper/ok"))
bundle.save_capture(os.path.join(work, "sub/deeper/ok"), "aiter.gemm_a4w4", (3, 32, 64),
                    dict(ops, y=codec.Raw("BF16", y)), GEMM)
# the default scales: outputs outside the exact regime, so the correct capture is not judged
wide = random_operands(np.random.default_rng(5), 3, 32, 64)
os.makedirs(os.path.join(work, "unjudged"))
bundle.save_capture(os.path.join(work, "unjudged"), "aiter.gemm_a4w4", (3, 32, 64),
                    dict(wide, y=codec.Raw("BF16", exact_y(wide))), GEMM)
# a quantizer of zeros (amax 0: scale 0, codes 0) whose shuffle flag says "shuffled"
qx = np.zeros((2, 32), np.uint16)
os.makedirs(os.path.join(work, "quant"))
bundle.save_capture(os.path.join(work, "quant"), "aiter.per_1x32_f4_quant_hip", (2, 0, 32),
                    {"x": codec.Raw("BF16", qx), "a_fp4": np.zeros((2, 16), np.uint8),
                     "a_scale": np.zeros((2, 1), np.uint8)},
                    {"call_site": "t.py:1", "layer": "l", "contract": "", "layouts": "",
                     "shuffle": "True"})


def raw_file(path, tensors, meta):
    """tensors [(name, dtype, array)] laid out in this order (no alignment), as a file."""
    entries, chunks, pos = [], [], 0
    for name, dtype, a in tensors:
        data = np.ascontiguousarray(a).tobytes()
        entries.append((name, dtype, a.shape, pos, pos + len(data)))
        chunks.append(data)
        pos += len(data)
    head = codec.header_json(entries, meta)
    with open(path, "wb") as f:
        f.write(len(head).to_bytes(8, "little") + head + b"".join(chunks))


# y at an odd offset: a_scale [3, 1] (3 bytes) before it; K = 32
o32 = random_operands(np.random.default_rng(6), 3, 32, 32)
meta = dict(GEMM, format="a4w4-capture/1", op="aiter.gemm_a4w4", M="3", N="32", K="32")
os.makedirs(os.path.join(work, "odd"))
raw_file(os.path.join(work, "odd/gemm.safetensors"),
         [("a_scale", "U8", o32["a_scale"]), ("y", "BF16", exact_y(o32)),
          ("a_fp4", "U8", o32["a_fp4"]), ("w_fp4", "U8", o32["w_fp4"]),
          ("w_scale", "U8", o32["w_scale"])], meta)
raw_file(os.path.join(work, "odd/quant.safetensors"),
         [("a_scale", "U8", np.zeros((1, 1), np.uint8)), ("x", "BF16", np.zeros((1, 32), np.uint16)),
          ("a_fp4", "U8", np.zeros((1, 16), np.uint8))],
         {"format": "a4w4-capture/1", "op": "aiter.per_1x32_f4_quant_hip", "M": "1", "N": "0",
          "K": "32", "call_site": "", "layer": "", "contract": "", "layouts": "",
          "shuffle": "False"})
# an op holding a newline and ESC
codec.save(os.path.join(work, "op.safetensors"), dict(ops, y=codec.Raw("BF16", y)),
        dict(GEMM, format="a4w4-capture/1", op="aiter.gemm_a4w4\n\x1b[2Jx", M="3", N="32",
             K="64"))
PY

verify() { # verify NAME FILE...: verify FILEs, stdout/stderr in WORK/NAME.out/.err; prints rc
  local name=$1
  shift
  "$CLI" verify "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $?
}
only() { ls "$WORK/$1"/*.safetensors; }

# 1. fields that change the result: judged or refused
rc=$(verify good $(only good))
[ "$rc" -eq 0 ] || fail "the correct capture: exit $rc ($(cat "$WORK/good.out" "$WORK/good.err"))"
grep -q "verify: 1 passed, 0 failed, 0 n/a" "$WORK/good.out" || fail "good: $(tail -1 "$WORK/good.out")"
# declared exact with outputs outside its regime: skip, and the count line says skipped, not
# n/a (it said "0 passed, 0 failed, 1 n/a" beside a SKIP line)
rc=$(verify unjudged $(only unjudged))
[ "$rc" -eq 5 ] || fail "unjudged: exit $rc, expected 5 ($(cat "$WORK/unjudged.out" "$WORK/unjudged.err"))"
grep -q "^verify: 0 passed, 0 failed, 0 n/a, 1 skipped$" "$WORK/unjudged.out" ||
  fail "unjudged: $(tail -1 "$WORK/unjudged.out")"
for c in bias:"the call passed a bias" alpha:"metadata alpha '0.0', beta '0.0'" \
  beta:"metadata alpha '1.0', beta '1.0'" preshuffle:"metadata bpreshuffle 'True' but the capture holds w_fp4" \
  dtype:"metadata dtype 'torch.float16'" skipreduce:"metadata skip_reduce 'True'" \
  quant:"metadata shuffle 'True' but the capture holds a_scale"; do
  name=${c%%:*} want=${c#*:}
  rc=$(verify "$name" $(only "$name"))
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2 ($(cat "$WORK/$name.out"))"
  [ "$(wc -l < "$WORK/$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$WORK/$name.err")"
  grep -qF "$want" "$WORK/$name.err" || fail "$name: $(cat "$WORK/$name.err")"
done

# 2. odd offsets: read and judged (under UBSan a misaligned read aborts)
rc=$(verify odd "$WORK/odd/gemm.safetensors" "$WORK/odd/quant.safetensors")
[ "$rc" -eq 0 ] || fail "odd offsets: exit $rc ($(cat "$WORK/odd.out" "$WORK/odd.err"))"
grep -q "verify: 3 passed, 0 failed, 0 n/a" "$WORK/odd.out" || fail "odd: $(tail -1 "$WORK/odd.out")"

# 3. an op with a newline and ESC: one line, no ESC
rc=$(verify op "$WORK/op.safetensors")
[ "$rc" -eq 2 ] || fail "odd op: exit $rc, expected 2"
[ "$(wc -l < "$WORK/op.err")" -eq 1 ] || fail "odd op: not one line: $(cat -v "$WORK/op.err")"
! grep -q $'\x1b' "$WORK/op.err" || fail "odd op: ESC printed raw: $(cat -v "$WORK/op.err")"
grep -qF "metadata op 'aiter.gemm_a4w4??[2Jx' is not" "$WORK/op.err" || fail "odd op: $(cat -v "$WORK/op.err")"

# 4. run --captures
printf 'name,M,N,K,regime,seed,tags\nci_a,2,32,64,exact,72001,capture\n' > "$WORK/one.csv"
runc() { # runc NAME DIR: run one case and DIR's captures into WORK/r-NAME; prints rc
  "$CLI" run --cases "$WORK/one.csv" --no-golden --backend cpu-fallback --captures "$2" \
    --out "$WORK/r-$1" --quiet 2>"$WORK/r-$1.err"
  echo $?
}
mkdir -p "$WORK/empty"
rc=$(runc empty "$WORK/empty")
[ "$rc" -eq 5 ] || fail "run --captures EMPTY: exit $rc, expected 5"
grep -q "run: verdict INCOMPLETE: 1 entry skipped (first: capture/(none) on capture: --captures $WORK/empty holds no capture bundle" \
  "$WORK/r-empty.err" || fail "empty: $(cat "$WORK/r-empty.err")"
rc=$(runc sub "$WORK/sub")
[ "$rc" -eq 1 ] || fail "run --captures with captures in subdirectories: exit $rc, expected 1"
grep -q '"recorded_items":	3,' "$WORK/r-sub/results.json" || fail "sub: not 3 items (1 case, 2 captures)"
grep -qF '`capture/deeper/aiter.gemm_a4w4_3x32x64_0` (layer l at t.py:1) on `capture:aiter.gemm_a4w4`' "$WORK/r-sub/summary.md" ||
  fail "sub: the wrong capture one level down is not named"
grep -q '"name":	"capture/deeper/ok/aiter.gemm_a4w4_3x32x64_0"' "$WORK/r-sub/results.json" ||
  fail "sub: the capture two levels down was not judged"
rc=$(runc bias "$WORK/bias")
[ "$rc" -eq 2 ] || fail "run --captures with a bias capture: exit $rc, expected 2"
mkdir -p "$WORK/badname"
cp "$(only good)" "$WORK/badname/"$'x\ny'".safetensors"
rc=$(runc badname "$WORK/badname")
[ "$rc" -eq 2 ] || fail "a capture file name with a newline: exit $rc, expected 2"
[ "$(wc -l < "$WORK/r-badname.err")" -eq 1 ] && grep -q "x?y.safetensors: a name holding a control byte" \
  "$WORK/r-badname.err" || fail "badname: $(cat -v "$WORK/r-badname.err")"
echo "capture_integrity: unmodeled fields refused, odd offsets read, control bytes quoted, empty and nested --captures never PASS"
