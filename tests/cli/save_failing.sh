#!/usr/bin/env bash
# A failing entry is actionable from the red line: run prints the first failing entries with
# their first mismatch and a one-line repro command; results.json and summary.md carry the same
# "repro"; --save-failing DIR writes the failing case's operands with the outputs the backend
# returned and the oracle's (engine/failing.h) plus DIR/manifest.json; the repro command reruns
# exactly that case (same set, seed, backend) and fails again; `verify` re-checks the saved
# bundle from the file alone (the recorded got fails, the recorded expected passes); `run
# --bundle` reruns its operands (the faulty plugin fails, a correct one passes: the recorded
# outputs never fail the bundle itself); `python -m a4w4check.external` accepts the directory.
# The faulty backend is the selftest mutant mut-drop-kblock as a plugin (droptail: the last K
# block dropped when K % 256 != 0).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$WORK"
P=$(dirname "$CLI")/plugins
DROP=plugin:$P/liba4w4_droptail_plugin.so REF=plugin:$P/liba4w4_ref_plugin.so
fail() { echo "save_failing: $*"; exit 1; }

cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
k288,3,32,288,exact,7,tail
k256,3,32,256,exact,8,notail
CSV

set +e
"$CLI" run --cases c.csv --no-golden --quiet --backend "$DROP" --out out --save-failing saved \
  2> run.err
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat run.err; fail "run exit $rc, expected 1"; }
grep -q "^a4w4check run: FAIL k288 on $DROP (ordered(1)): 94 of 96 checked differ, first y (0, 0)" run.err ||
  { cat run.err; fail "stderr lacks the failing entry's line"; }
want="a4w4check run --cases c.csv --no-golden --case k288 --backend $DROP --out build/repro"
grep -qF "  repro: $want" run.err || { cat run.err; fail "stderr lacks the repro line"; }
grep -qF "Repro: \`$want\`" out/summary.md || fail "summary.md lacks the repro"

python3 - "$DROP" <<'PY' || fail "results.json does not say what it must"
import json, sys
doc = json.load(open("out/results.json"))
e = {(x["name"], x["backend"]): x for x in doc["cases"]}
bad, good = e[("k288", sys.argv[1])], e[("k256", sys.argv[1])]
assert bad["verdict"] == "fail" and bad["repro"].startswith("a4w4check run --cases c.csv"), bad
assert bad["saved"] == "k288@plugin_liba4w4_droptail_plugin.so", bad
assert good["verdict"] == "pass" and "repro" not in good and "saved" not in good, good
PY

# the repro reruns exactly that case and fails again
repro=$(grep -F "  repro: " run.err | head -n 1 | sed 's/^  repro: a4w4check //')
set +e
# shellcheck disable=SC2086
"$CLI" $repro --quiet 2> repro.err; rc=$?
set -e
[ "$rc" -eq 1 ] || { cat repro.err; fail "repro exit $rc, expected 1"; }
python3 - <<'PY' || fail "the repro did not rerun exactly k288"
import json
doc = json.load(open("build/repro/results.json"))
# (and the plugin's call sequence, on k288 alone: the repro's matrix)
names = sorted({x["name"] for x in doc["cases"]})
assert names == ["k288", "k288/call-sequence"], names
assert [x["verdict"] for x in doc["cases"] if x["backend"] != "oracle"
        and not x["name"].endswith("/call-sequence")] == ["fail"]
PY

# the saved bundle: no partial file, a manifest, verify shows the failure from the file alone
b="saved/k288@plugin_liba4w4_droptail_plugin.so.safetensors"
[ -f "$b" ] && [ -f saved/manifest.json ] || fail "no $b or manifest"
! ls saved | grep -q tmp || fail "a temporary file was left in saved/"
set +e
"$CLI" verify "$b" > verify.out 2>&1; rc=$?
set -e
[ "$rc" -eq 1 ] || { cat verify.out; fail "verify exit $rc, expected 1"; }
grep -qF "recorded y_expected (the contract's oracle) (96 checked); $DROP, ordered(1)" verify.out &&
  grep -q "^FAIL .* recorded y_got: first mismatch at (0, 0): .*, 94 of 96 mismatch; " verify.out &&
  grep -q "^PASS .* y_exact (exact oracle) (96 checked)" verify.out ||
  { cat verify.out; fail "verify does not re-check the recorded outputs"; }

# rerun the bundle's operands: the faulty plugin fails, a correct one passes
set +e
"$CLI" run --bundle "$b" --backend "$DROP" --quiet --out rerun 2> rerun.err; rc=$?
"$CLI" run --bundle "$b" --backend "$REF" --quiet --out rerun-ref 2> rerun-ref.err; rc2=$?
set -e
[ "$rc" -eq 1 ] || { cat rerun.err; fail "run --bundle on the faulty plugin: exit $rc"; }
[ "$rc2" -eq 0 ] || { cat rerun-ref.err; fail "run --bundle on the correct plugin: exit $rc2"; }
grep -qF "repro: a4w4check run --bundle $b --backend $DROP" rerun.err ||
  { cat rerun.err; fail "the bundle rerun's repro names no --bundle"; }

# a run judged under --contract and a stated E8M0 code-0 reading reruns under them: the repro
# carries both (a repro without them judges the rerun by another contract or reading)
set +e
"$CLI" run --cases c.csv --no-golden --quiet --backend "$DROP,$REF" --contract "$DROP=ordered(1)" \
  --e8m0-code0 2^-127 --max-timeouts 3 --out out-k 2> run-k.err
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat run-k.err; fail "run with --contract: exit $rc, expected 1"; }
want="a4w4check run --cases c.csv --no-golden --case k288 --backend $DROP --contract '$DROP=ordered(1)' --e8m0-code0 '2^-127' --max-timeouts 3 --out build/repro"
grep -qF "  repro: $want" run-k.err || { cat run-k.err; fail "the repro lacks --contract or --e8m0-code0"; }
repro=$(grep -F "  repro: " run-k.err | head -n 1 | sed 's/^  repro: a4w4check //')
set +e
eval "\"\$CLI\" $repro --quiet" 2> repro-k.err; rc=$?
set -e
[ "$rc" -eq 1 ] || { cat repro-k.err; fail "the repro with --contract: exit $rc, expected 1"; }

# the Python bridge takes the directory as operands
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  PYTHONPATH=$SRC/python /usr/bin/python3 -m a4w4check.external --ops saved --out ext \
    --kernel torch-dequant > ext.out 2>&1 || { cat ext.out; fail "external refused saved/"; }
  # k288's bundle and the call sequence's failing call (k256's sequence, its call 4 at k288's
  # shape: tests/cli/call_sequence.sh)
  grep -q "2 cases written, 0 failed" ext.out || { cat ext.out; fail "external: not 2 cases"; }
  [ -f "saved/k256-call-sequence-4@plugin_liba4w4_droptail_plugin.so.safetensors" ] ||
    { ls saved; fail "the call sequence's failing call was not saved"; }
else
  echo "note: no numpy for /usr/bin/python3: the external step is not run"
fi
# a failing layout entry has no operands to save: the run still fails (1), not "cannot write"
# (4), and DIR/manifest.json lists nothing (reproducer, before: exit 4, "cannot create
# temporary file DIR/manifest.json.tmpXXXX: No such file or directory")
printf 'name,M,N,K,regime,seed,tags\na,4,64,256,normal,1,\n' > lay.csv
set +e
"$CLI" run --cases lay.csv --no-golden --backend mut-preshuffle-k1n1 --full --save-failing sv-lay \
  --out r-lay --quiet > lay.out 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat lay.out; fail "layout mutant with --save-failing: exit $rc, expected 1"; }
[ -f sv-lay/manifest.json ] || fail "no sv-lay/manifest.json"

# two failing plugins of one file name from different folders: each entry keeps its own bundle
# (a hash of its path after the name) and says which (reproducer, before: both said
# "saved: k288@plugin_libk.so", one file remained holding the second plugin's outputs)
mkdir -p pa pb
cp "$P/liba4w4_droptail_plugin.so" pa/libk.so
cp "$P/liba4w4_droptail_plugin.so" pb/libk.so
set +e
"$CLI" run --cases c.csv --no-golden --case k288 \
  --backend "plugin:$WORK/pa/libk.so,plugin:$WORK/pb/libk.so" --out r-two --save-failing sv-two --quiet > two.out 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat two.out; fail "two plugins libk.so: exit $rc, expected 1"; }
[ "$(grep -c '  saved: k288@plugin_libk.so-' two.out)" = 2 ] || { cat two.out; fail "two plugins libk.so: the saved lines do not name each"; }
python3 - "$WORK" <<'PY' || { cat two.out; fail "two plugins libk.so: not two saved bundles"; }
import json, os, sys
doc = json.load(open("r-two/results.json"))
saved = {x["backend"]: x.get("saved") for x in doc["cases"] if x["backend"].startswith("plugin:")
         and not x["name"].endswith("/call-sequence")}  # the plain entries
assert len(saved) == 2 and len(set(saved.values())) == 2, saved
for b, s in saved.items():
    assert s and s.startswith("k288@plugin_libk.so-"), saved
    assert os.path.isfile(os.path.join("sv-two", s + ".safetensors")), s
# each plugin's bundle of k288, each one's call-sequence bundle (its first call), the manifest
assert len(os.listdir("sv-two")) == 5, os.listdir("sv-two")
assert sorted(f for f in os.listdir("sv-two") if "call-sequence" in f) == sorted(
    "k288-call-sequence-1" + s[len("k288"):] + ".safetensors" for s in saved.values()), os.listdir("sv-two")
PY
echo "save failing ok"
