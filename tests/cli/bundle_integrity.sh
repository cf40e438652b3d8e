#!/usr/bin/env bash
# A bundle:DIR directory is one run of one kernel over one matrix (harness/backends/bundle.h):
# it is judged on exactly the files its manifest lists, and every conflict is refused with one
# line and exit 2, never judged PASS. Each block below reproduces one way a directory lied
# (export -> python -m a4w4check.external -> run --backend bundle:DIR on 3 small cases):
#   1. stale outputs: a kernel that wrote every case, then a kernel that failed on every case
#      run into the same directory: external removes the first kernel's files before its
#      first case; one put back (a stale file the manifest lists as failed) -> exit 2 naming
#      it (was PASS);
#   2. the manifest's failed cases are failing entries (the kernel failed on them): exit 1
#      (was 5, a skip);
#   3. a case the manifest does not list (file gone too) is a skip: INCOMPLETE, exit 5;
#   4. manifest tool_version of another a4w4check -> exit 2 (was PASS);
#   5. contract.txt "exact" against the manifest's "bounded(1)" -> exit 2 (was: the manifest
#      silently won, PASS);
#   6. a file the manifest does not list -> exit 2 (was PASS);
#   7. a manifest case that is no item of the run -> exit 2 (was PASS);
#   8. a file whose metadata names another kernel than the manifest -> exit 2 (was PASS);
#   9. a directory without a manifest holding a file no item of the run reads -> exit 2
#      (was PASS); without the foreign file it passes (contract.txt alone still works).
# Usage: bundle_integrity.sh CLI SRC WORK TOOLS
set -u
CLI=$1 SRC=$2 WORK=$3
PY=/usr/bin/python3
fail() { echo "bundle_integrity: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
export PYTHONPATH="$SRC/python:$WORK" PYTHONDONTWRITEBYTECODE=1
cat > "$WORK/cases.csv" <<'CSV'
name,M,N,K,regime,seed,tags
bi_a,3,32,64,exact,71001,bundle
bi_b,5,64,256,wide,71002,bundle
bi_c,1,16,32,normal,71003,bundle
CSV
cat > "$WORK/boom.py" <<'PY'
def gemm(**_):
    raise RuntimeError("boom")
gemm.a4w4_contract = "bounded(1)"
PY
ext() { "$PY" -m a4w4check.external --ops "$WORK/ops" "$@" >/dev/null 2>&1; }
# run DIR NAME: run the matrix on bundle:DIR into WORK/NAME; stderr in WORK/NAME.err; prints rc
run() {
  "$CLI" run --cases "$WORK/cases.csv" --no-golden --backend "bundle:$1" --out "$WORK/r-$2" \
    --quiet 2>"$WORK/$2.err"
  echo $?
}
one_line() { # one_line NAME PATTERN: stderr of NAME is one line matching PATTERN
  [ "$(wc -l < "$WORK/$1.err")" -eq 1 ] || fail "$1: stderr is not one line: $(cat "$WORK/$1.err")"
  grep -q -- "$2" "$WORK/$1.err" || fail "$1: stderr lacks '$2': $(cat "$WORK/$1.err")"
}
# manifest DIR PYTHON-STATEMENTS: edit DIR/manifest.json as m (a dict)
manifest() {
  "$PY" - "$1/manifest.json" "$2" <<'PY' || fail "cannot edit $1/manifest.json"
import json, sys
p = sys.argv[1]
m = json.load(open(p))
exec(sys.argv[2])
open(p, "w").write(json.dumps(m, indent=2))
PY
}
fresh() { rm -rf "$WORK/$1" && cp -r "$WORK/good" "$WORK/$1"; }

"$CLI" export --cases "$WORK/cases.csv" --no-golden --out "$WORK/ops" --quiet >/dev/null ||
  fail "export exit $?"
ext --out "$WORK/good" --kernel torch-dequant || fail "external torch-dequant exit $?"
rc=$(run "$WORK/good" good)
[ "$rc" -eq 0 ] || fail "the correct directory: exit $rc, expected 0 ($(cat "$WORK/good.err"))"

# 1. stale outputs of an earlier kernel
fresh stale
ext --out "$WORK/stale" --kernel boom:gemm
[ $? -eq 1 ] || fail "external boom: expected exit 1 (every case failed)"
for c in bi_a bi_b bi_c; do
  [ ! -e "$WORK/stale/$c.safetensors" ] || fail "external left the earlier run's $c output"
done
cp "$WORK/good/bi_a.safetensors" "$WORK/stale/"
rc=$(run "$WORK/stale" stale)
[ "$rc" -eq 2 ] || fail "stale outputs: exit $rc, expected 2"
one_line stale "bundle $WORK/stale: bi_a.safetensors is not among the cases manifest.json lists as written (it lists that case as failed) (kernel boom:gemm)"
[ ! -e "$WORK/r-stale/results.json" ] || fail "stale outputs: a refused run wrote results.json"

# 2. the stale file removed: the manifest's failed cases fail
rm "$WORK/stale"/*.safetensors
rc=$(run "$WORK/stale" failed)
[ "$rc" -eq 1 ] || fail "failed cases: exit $rc, expected 1"
grep -q '"verdict_reason":.*"3 failing entries' "$WORK/r-failed/results.json" ||
  fail "failed cases: $(grep verdict_reason "$WORK/r-failed/results.json")"
grep -q 'the kernel (boom:gemm) failed on this case, .*manifest.json says: RuntimeError: boom' \
  "$WORK/r-failed/results.json" || fail "failed cases: the entry does not say the kernel failed"

# 3. a case the manifest does not list: skip, INCOMPLETE
fresh unlisted
manifest "$WORK/unlisted" 'm["cases"].remove("bi_b")'
rm "$WORK/unlisted/bi_b.safetensors"
rc=$(run "$WORK/unlisted" unlisted)
[ "$rc" -eq 5 ] || fail "unlisted case: exit $rc, expected 5"
grep -q '1 entry skipped (first: bi_b on bundle:.*manifest.json does not list this case' \
  "$WORK/r-unlisted/results.json" || fail "unlisted case: $(grep verdict_reason "$WORK/r-unlisted/results.json")"

# refused NAME PATTERN SETUP...: a copy of the correct directory, changed by SETUP (a command
# run inside it), is refused: exit 2, every stderr line matching PATTERN (one per refused file)
refused() {
  local name=$1 pattern=$2
  shift 2
  fresh "$name"
  (cd "$WORK/$name" && "$@") || fail "$name: the setup failed"
  rc=$(run "$WORK/$name" "$name")
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2"
  [ -s "$WORK/$name.err" ] && ! grep -vqF -- "$pattern" "$WORK/$name.err" ||
    fail "$name: stderr is not lines of '$pattern': $(cat "$WORK/$name.err")"
}
# 4. another tool version
refused version "bundle $WORK/version/manifest.json: tool_version '0.0.1', this a4w4check is" \
  manifest . 'm["tool_version"] = "0.0.1"'
# 5. contract.txt against the manifest's contract
exact_txt() { echo exact > contract.txt; }
refused contract "manifest.json names contract 'bounded(1)' and contract.txt 'exact'" exact_txt
# 6. a file the manifest does not list
refused extra "bi_c.safetensors is not among the cases manifest.json lists as written (kernel torch-dequant)" \
  manifest . 'm["cases"].remove("bi_c")'
# 7. a manifest case that is no item of the run
add_bi_z() { cp bi_c.safetensors bi_z.safetensors && manifest . 'm["cases"].append("bi_z")'; }
refused foreign "manifest.json: case 'bi_z' is no item of this run" add_bi_z
# 8. files of another kernel than the manifest's
refused kernel "metadata kernel 'torch-dequant', the manifest's is 'aiter-asm' (the output of another kernel" \
  manifest . 'm["kernel"] = "aiter-asm"'

# 9. no manifest: contract.txt alone works; a file no item reads is refused
fresh plain
rm "$WORK/plain/manifest.json"
rc=$(run "$WORK/plain" plain)
[ "$rc" -eq 0 ] || fail "contract.txt only: exit $rc, expected 0 ($(cat "$WORK/plain.err"))"
cp "$WORK/plain/bi_a.safetensors" "$WORK/plain/old_case.safetensors"
rc=$(run "$WORK/plain" plainx)
[ "$rc" -eq 2 ] || fail "no manifest, a foreign file: exit $rc, expected 2"
one_line plainx "bundle $WORK/plain: old_case.safetensors is the output of no item of this run"
echo "bundle_integrity: stale, unlisted, foreign and contradicting bundle directories refused; failed cases fail"
