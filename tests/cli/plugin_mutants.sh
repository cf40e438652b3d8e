#!/usr/bin/env bash
# Adversarial plugins (tests/plugins/ref_plugin.c, after KernelBench's reward hacks) each fail
# every entry they cheat on, with a note naming what they did, isolated and in-process
# (harness/engine/integrity.c, harness/backends/plugin.c), and the harness lives:
#   pastend     writes 64 values past the end of y   -> "wrote 64 values past the end of y"
#   beforey     writes y[-1]                          -> "wrote 1 value before y"
#   wrinput     flips a bit of w_scale                -> "wrote into its input w_scale"
#   zeroin      zeroes a_fp4 and w_fp4 first           -> "wrote into its input a_fp4"
#   stale       returns its previous call's outputs   -> "stale result ... (case s1)"
#   sidethread  computes after gemm returned           -> "changed after gemm returned"
#               (isolated only: in-process, its thread would write into freed memory)
# Reproducers (before the fix): `run --backend plugin:liba4w4_pastend_plugin.so` passed
# isolated and aborted (exit 134) with --no-isolate; beforey, wrinput, stale passed.
. "$(dirname "$0")/common.sh.inc"

# three cases of one output shape (the stale plugin repeats the first's outputs) and one more
cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
s1,4,32,64,normal,1,
s2,4,32,64,normal,2,
s3,4,32,64,normal,3,
t1,33,64,128,normal,4,
CSV

# mutant MODE PLUGIN NOTE_RE [PASSING]: run it (MODE "" isolated, or --no-isolate): exit 1;
# the results are checked together at the end (one python3: it starts slowly here)
mutant() {
  local mode=$1 plugin=$2 out=$2${1:+-inproc}
  code timeout 300 "$CLI" run --cases c.csv --no-golden --quiet --out "$out" $mode \
    --backend "cpu-fallback,plugin:$P/liba4w4_${plugin}_plugin.so"
  [ "$rc" = 1 ] || { cat err.txt; fail "$plugin ${mode:-isolated}: exit $rc, expected 1"; }
  printf '%s\t%s\t%s\n' "$out" "$3" "${4:-}" >> expect.tsv
}

: > expect.tsv
for mode in "" --no-isolate; do
  mutant "$mode" pastend 'wrote 64 values past the end of y'
  mutant "$mode" beforey 'wrote 1 value before y \(down to y\[-1\]\)'
  mutant "$mode" wrinput 'wrote into its input w_scale'
  mutant "$mode" zeroin 'wrote into its input a_fp4'
  # s2 and s3 repeat s1 (t1, another output count, is computed anew)
  mutant "$mode" stale 'stale result: its outputs repeat bit for bit those of its previous call \(case s[12]\)' "s1 t1"
done
mutant "" sidethread 'output values? changed after gemm returned \(work still running at return'

# every plugin entry but PASSING's fails with NOTE_RE in its note; every cpu-fallback entry
# passes; each document is FAIL with the 4 items
python3 - expect.tsv <<'PY' || fail "the results do not say what they must (above)"
import json, re, sys
bad = []
for line in open(sys.argv[1]):
    d, note_re, passing = line.rstrip("\n").split("\t")
    doc = json.load(open(d + "/results.json"))
    last = ""
    for e in doc["cases"]:
        if e["backend"] == "cpu-fallback" and e["verdict"] != "pass":
            bad.append("%s: cpu-fallback %s: %s (%s)" % (d, e["name"], e["verdict"], e.get("note")))
        if not e["backend"].startswith("plugin:"):
            continue
        if e["name"] in passing.split():
            if e["verdict"] != "pass": bad.append("%s: %s %s %s" % (d, e["name"], e["verdict"], e.get("note")))
            continue
        if e["name"].endswith("/call-sequence"):  # its calls fail, named by call (call_sequence.sh)
            if e["verdict"] != "fail": bad.append("%s: %s: verdict %s" % (d, e["name"], e["verdict"]))
            continue
        last = e.get("note", "")
        if e["verdict"] != "fail" or not re.search(note_re, last):
            bad.append("%s: %s: verdict %s, note %r" % (d, e["name"], e["verdict"], last))
    if doc["verdict"] != "FAIL" or doc["counts"]["recorded_items"] != 4:
        bad.append("%s: verdict %s, %s items" % (d, doc["verdict"], doc["counts"]["recorded_items"]))
    print("%s: every cheating entry fails: %s" % (d, last))
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
echo "plugin mutants: each fails its entries naming what it did"
