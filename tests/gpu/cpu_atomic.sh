#!/usr/bin/env bash
# hip-mma-atomic declares atomic(4) (contracts §4.1 "atomic(S)"): it is judged bit for bit
# against every order of its bf16 split adds, on every output, on the device path
# (a4w4check_cpu, the CPU stand-ins of gpu/ and of the judge). The pre-merge set's tiny cases,
# where bounded(4)'s bound admits 0 and the entry was not judged, PASS with every output
# checked, beside a normal one; so does the
# stand-in kernel that adds in split order only (A4W4_GPU_CPU_FAULT=atomic-fixed: one order of
# the set). Its wrong kernels fail on the tiny cases and on the normal one: a split total
# rounded to bf16 toward zero (atomic-rz), the last split never added (atomic-drop), the split
# totals added in fp32 and rounded once (atomic-fp32), the zeroed output left as is
# (atomic-zero); the first and the third fail on the host path too (--host-judge, the C
# oracles on the sample).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
TINY=(t_m1_n256_k1024 t_m2_n192_k2048 t_m33_n256_k512 t_m64_n512_k4096 t_m300_n256_k768)
ALL=("${TINY[@]}" m64_n192_k1024)
run() { # out fault [run options]; prints the exit status
  local out=$1 fault=$2 sel=()
  shift 2
  for c in "${ALL[@]}"; do sel+=(--case "$c"); done
  set +e
  A4W4_GPU_CPU_FAULT=$fault "$CLI" run --e8m0-code0 2^-127 --set premerge "${sel[@]}" \
    --no-golden --no-call-sequence --budget-seconds 0 --backend hip-mma-atomic \
    --out "$WORK/$out" --quiet "$@" >"$WORK/$out.log" 2>&1
  echo $?
  set -e
}
for f in none atomic-fixed; do
  rc=$(run "$f" "$f")
  [ "$rc" = 0 ] || { cat "$WORK/$f.log"; echo "$f: exit $rc, expected 0 (PASS)"; exit 1; }
done
for f in atomic-rz atomic-drop atomic-fp32 atomic-zero; do
  paths=(dev); [ "$f" = atomic-rz ] || [ "$f" = atomic-fp32 ] && paths+=(host)
  for path in "${paths[@]}"; do
    opt=(); [ "$path" = host ] && opt=(--host-judge)
    rc=$(run "$f.$path" "$f" "${opt[@]}")
    [ "$rc" = 1 ] || { cat "$WORK/$f.$path.log"; echo "$f ($path): exit $rc, expected 1"; exit 1; }
  done
done
python3 - "$WORK" "${TINY[*]}" <<'PY'
import json, sys
W, tiny = sys.argv[1], sys.argv[2].split()
def entries(out):
    d = json.load(open("%s/%s/results.json" % (W, out)))
    return {e["name"]: e for e in d["cases"] if e["backend"] == "hip-mma-atomic"}
for out in ("none", "atomic-fixed"):
    es = entries(out)
    assert len(es) == len(tiny) + 1, (out, sorted(es))
    for name, e in es.items():
        n = e["M"] * e["N"]
        assert e["contract"] == "atomic(4)", e
        assert e["verdict"] == "pass" and e["judged_bit_exact"] == n and e["not_judged"] == 0, e
        assert e["checked_outputs"] == n and not e["sampled"], e
for f in ("atomic-rz", "atomic-drop", "atomic-fp32", "atomic-zero"):
    for path in ("dev", "host") if f in ("atomic-rz", "atomic-fp32") else ("dev",):
        es = entries("%s.%s" % (f, path))
        failed = sorted(k for k, e in es.items() if e["verdict"] == "fail" and e["mismatches"] > 0)
        assert failed == sorted(tiny + ["m64_n192_k1024"]), (f, path, failed)
        if path == "dev":  # every output judged on the device, never a sample
            assert all(e["checked_outputs"] == e["M"] * e["N"] for e in es.values()), (f, es)
print("atomic(4): %d cases PASS on every output (tiny ones included), fixed order PASS, "
      "four wrong kernels FAIL" % (len(tiny) + 1))
PY
echo "atomic(S) GPU entry judged bit for bit on every output: PASS"
