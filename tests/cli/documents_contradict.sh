#!/usr/bin/env bash
# A results document whose own fields contradict its verdicts is refused where it is loaded
# (reports/doc_consistency.c, from harness/io/results.c and harness/io/stream.c): merge,
# compare and report exit 2 with one line naming the entry, never 0 or PASS.
# Reproducers (before the fix): an entry of results.json / results.jsonl edited to
#   "pass" with mismatches 12, "pass" with aborted "crashed", "pass" with unwritten 5,
#   "pass" with checked_outputs 0, or a "skip" entry inside a PASS document
# gave merge 0, compare 0, report PASS; results.json with its "cases" emptied, or with every
# entry of one backend removed (the counts left as they were), gave report PASS and
# `compare X X` 0.
. "$(dirname "$0")/common.sh.inc"

cat > c.csv <<'CSV'
name,M,N,K,regime,seed,tags
a,4,32,64,normal,1,
b,8,64,128,normal,2,
CSV
"$CLI" run --cases c.csv --no-golden --backend cpu-fallback --out good --quiet ||
  fail "the good run: exit $?"

# the edited copies of good: in each, cpu-fallback's entry of case b changed as its python
# statement says, in both results.json and results.jsonl
python3 - <<'PY'
import json, shutil
edits = {"mismatches=12": "e['mismatches'] = 12", "aborted": "e['aborted'] = 'crashed'",
         "unwritten": "e['unwritten'] = 5", "nothing-checked": "e['checked_outputs'] = 0",
         "skip": "e['verdict'] = 'skip'; e['checked_outputs'] = 0"}
for d, edit in edits.items():
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree("good", d)
    def change(e):
        if e.get("name") == "b" and e.get("backend") == "cpu-fallback":
            exec(edit, {}, {"e": e})
    doc = json.load(open(d + "/results.json"))
    for e in doc["cases"]:
        change(e)
    json.dump(doc, open(d + "/results.json", "w"), indent=1)
    lines = []
    for l in open(d + "/results.jsonl"):
        j = json.loads(l)
        for e in j.get("entries", []):
            change(e)
        lines.append(json.dumps(j))
    open(d + "/results.jsonl", "w").write("\n".join(lines) + "\n")
PY

# refused CMD...: exit 2 and exactly one line on stderr matching $want
refused() {
  code "$@"
  [ "$rc" = 2 ] || { cat err.txt; fail "$*: exit $rc, expected 2"; }
  [ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "$*: not one line"; }
  grep -Eq "$want" err.txt || { cat err.txt; fail "$*: the line does not say '$want'"; }
}

for case in "mismatches=12:with 12 mismatches" \
            "aborted:although its run was aborted \\(crashed\\)" \
            "unwritten:with 5 outputs never written" \
            "nothing-checked:with no output checked"; do
  tag=${case%%:*} phrase=${case#*:}
  want="entry [0-9]+ \\(case b on cpu-fallback\\) records verdict pass $phrase"
  refused "$CLI" merge --out "m-$tag" "$tag"
  refused "$CLI" report "$tag" --out "r-$tag" --quiet
  refused "$CLI" compare good "$tag"
  refused "$CLI" compare "$tag" good
  [ ! -e "m-$tag/results.json" ] || fail "$tag: merge wrote a document"
  echo "$tag: merge, report and compare refuse: $(cat err.txt)"
done

# entries removed under counts that still count them: report and compare refuse
python3 - <<'PY'
import json, os, shutil
for d, keep in {"emptied": lambda e: False,
                "no-cpu": lambda e: e.get("backend") != "cpu-fallback"}.items():
    shutil.rmtree(d, ignore_errors=True)
    os.mkdir(d)
    doc = json.load(open("good/results.json"))
    doc["cases"] = [e for e in doc["cases"] if keep(e)]
    if d == "no-cpu":  # the other counts made to agree: only the backend list denies it
        doc["counts"]["entries"] = len(doc["cases"])
        doc["counts"]["outputs_checked"] = sum(e["checked_outputs"] for e in doc["cases"])
    json.dump(doc, open(d + "/results.json", "w"), indent=1)
PY
want="emptied/results.json: records counts of [0-9]+ entries, 2 items, [0-9]+ outputs checked over 0 entries"
refused "$CLI" report emptied --out r-emptied --quiet
refused "$CLI" compare emptied emptied
want="no-cpu/results.json: records backend cpu-fallback selected, checked, and in no entry"
refused "$CLI" report no-cpu --out r-no-cpu --quiet
refused "$CLI" compare good no-cpu
echo "entries removed: refused: $(cat err.txt)"

# one item's entry removed, repeated or moved to a backend the run never selected, the
# counts made to agree (before: report PASS, compare 0, the item of case b judged by no
# backend but the oracle)
python3 - <<'PY'
import copy, json, os
good = json.load(open("good/results.json"))
def b_cpu(e):
    return e.get("name") == "b" and e.get("backend") == "cpu-fallback"
a_cpu = [e for e in good["cases"] if e.get("name") == "a" and e.get("backend") == "cpu-fallback"][0]
def edit(d, f):
    doc = copy.deepcopy(good)
    doc["cases"] = [x for e in doc["cases"] for x in (f(e) if b_cpu(e) else [e])]
    doc["counts"]["entries"] = len(doc["cases"])
    doc["counts"]["outputs_checked"] = sum(e["checked_outputs"] for e in doc["cases"])
    doc["counts"]["pass"] = sum(e["verdict"] == "pass" for e in doc["cases"])
    os.makedirs(d, exist_ok=True)
    json.dump(doc, open(d + "/results.json", "w"), indent=1)
edit("unjudged", lambda e: [])
edit("twice", lambda e: [copy.deepcopy(a_cpu)])
edit("foreign", lambda e: [dict(e, backend="plugin:./other.so")])
PY
for case in "unjudged:records verdict PASS over case b with 1 of the 2 entries of its backends" \
            "twice:records two entries of case a on cpu-fallback" \
            "foreign:records an entry of case b on plugin:./other.so, no backend of the run"; do
  tag=${case%%:*} want=${case#*:}
  refused "$CLI" report "$tag" --out "r-$tag" --quiet
  refused "$CLI" compare good "$tag"
  echo "$tag: refused: $(cat err.txt)"
done

# a skip entry inside a PASS document (its fields alone are a skip: the document lies)
want="records verdict PASS over entry [0-9]+ \\(case b on cpu-fallback\\) with verdict skip"
refused "$CLI" report skip --out r-skip --quiet
refused "$CLI" compare good skip
echo "a skip inside PASS: refused: $(cat err.txt)"
# ... and merged from the stream it is a skip: INCOMPLETE (5), never PASS
set +e
"$CLI" merge --out m-skip skip 2> err.txt; rc=$?
set -e
[ "$rc" = 5 ] || { cat err.txt; fail "merge of a stream with a skip entry: exit $rc, expected 5"; }

# an INCOMPLETE run with ambiguous entries (E8M0 code 0, both readings) edited to PASS and
# relabelled a4w4check-results/1: refused as /2 refuses it (before: report "Verdict: PASS"
# beside "made no comparison", compare exit 0: the /1 path skipped the /2 checks)
printf 'name,M,N,K,regime,seed,tags\nz,33,64,256,code0,5,\n' > z.csv
set +e
"$CLI" run --cases z.csv --no-golden --backend "plugin:$P/liba4w4_ref_plugin.so" --out amb --quiet 2> /dev/null; rc=$?
set -e
[ "$rc" = 5 ] || fail "the code-0 run: exit $rc, expected 5 (ambiguous: INCOMPLETE)"
python3 - <<'PY'
import json, os
doc = json.load(open("amb/results.json"))
assert any(e["verdict"] == "ambiguous" for e in doc["cases"]), "no ambiguous entry"
for e in doc["cases"]:
    if e["verdict"] == "ambiguous":
        e["verdict"] = "pass"
doc["verdict"] = "PASS"
doc["counts"]["pass"] += doc["counts"]["ambiguous"]
doc["counts"]["ambiguous"] = 0
for v in ("2", "1"):
    os.makedirs("amb" + v, exist_ok=True)
    doc["schema"] = "a4w4check-results/" + v
    json.dump(doc, open("amb" + v + "/results.json", "w"), indent=1)
PY
want="records verdict pass on an ambiguous result"
refused "$CLI" report amb2 --out r-amb2 --quiet
refused "$CLI" compare amb2 amb2
want="amb1/results.json: /[a-z_0-9/]+: only a4w4check-results/2 defines it, no a4w4check-results/1 writer wrote it"
refused "$CLI" report amb1 --out r-amb1 --quiet
refused "$CLI" compare amb1 amb1
echo "ambiguous edited to PASS, /2 or /1: refused: $(cat err.txt)"
echo "documents_contradict: contradictory documents refused, one line each"
