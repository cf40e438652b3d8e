#!/usr/bin/env bash
# merge and --resume count distinct items, each with every entry its header promises, never
# lines (harness/io/stream.c, harness/cli/cmd_merge.c). Reproducers (before the fix): in a
# shard's results.jsonl, one item's line replaced by a copy of another's, or a line cut down
# to 1 of its 3 entries, merged as PASS ("36 of 36 items", 35 case names in the document);
# an item recorded by two shards merged twice.
. "$(dirname "$0")/common.sh.inc"
small_cases 6 > c.csv
run() { "$CLI" run --cases c.csv --no-golden --backend cpu-asm,cpu-fallback --quiet "$@"; }
run --shard 1/2 --out s1 || fail "shard 1: exit $?"
run --shard 2/2 --out s2 || fail "shard 2: exit $?"
"$CLI" merge --out m s1 s2 2>/dev/null || fail "the untouched shards: merge exit $?"

# the doctored shards (results.json removed): dup, s1 with its second line a copy of its
# first; cut, s1 with its first line cut to 1 of its 3 entries; twice, s2 with its first line
# replaced by s1's (an item of shard 1)
for d in dup cut; do rm -rf "$d"; cp -r s1 "$d"; rm -f "$d/results.json"; done
rm -rf twice; cp -r s2 twice; rm -f twice/results.json
python3 - <<'PY'
import json
def edit(d, f):
    ls = [json.loads(l) for l in open(d + "/results.jsonl")]
    f(ls)
    open(d + "/results.jsonl", "w").write("\n".join(json.dumps(j) for j in ls) + "\n")
edit("dup", lambda ls: ls.__setitem__(2, ls[1]))
edit("cut", lambda ls: ls[1].__setitem__("entries", ls[1]["entries"][:1]))
first = json.loads(open("s1/results.jsonl").readlines()[1])
edit("twice", lambda ls: ls.__setitem__(1, first))
PY

# damaged SHARD SAYS: merging SHARD with s2 is refused (2), the line saying SAYS; with
# --allow-partial the merge is INCOMPLETE (5) into m-SHARD
damaged() {
  code "$CLI" merge --out "m-$1" "$1" s2
  [ "$rc" = 2 ] && grep -q "$2" err.txt || { cat err.txt; fail "$1: merge exit $rc, expected 2 saying '$2'"; }
  code "$CLI" merge --allow-partial --out "m-$1" "$1" s2
  [ "$rc" = 5 ] || { cat err.txt; fail "$1, --allow-partial: exit $rc, expected 5"; }
}
damaged dup "recorded again"
damaged cut "holds 1 of the 3 entries the run promises"
echo "a repeated line, a cut line: refused; --allow-partial INCOMPLETE"

# one item in two shards: refused even with --allow-partial
code "$CLI" merge --allow-partial --out m-twice s1 twice
[ "$rc" = 2 ] || { cat err.txt; fail "an item in two shards: merge exit $rc, expected 2"; }
grep -q "is recorded by s1 and by twice" err.txt || { cat err.txt; fail "the refusal names no item"; }

# --resume runs the dropped items again: each item once, complete, PASS
for d in dup cut; do
  code run --shard 1/2 --out "$d" --resume
  [ "$rc" = 0 ] || { cat err.txt; fail "$d --resume: exit $rc, expected 0"; }
done
"$CLI" merge --out m-resumed dup s2 2>/dev/null || fail "merge after the resume: exit $?"

# the documents: each case once per backend; 5 of 6 items in m-dup; the resumed shards as s1
python3 - <<'PY' || fail "the documents do not name each case once (above)"
import json
def names(path):
    seen = {}
    for e in json.load(open(path))["cases"]:
        assert e["backend"] not in seen.setdefault(e["name"], set()), (path, e["name"], e["backend"])
        seen[e["name"]].add(e["backend"])
    return sorted(seen)
assert len(names("m-dup/results.json")) == 5, names("m-dup/results.json")
assert json.load(open("m-dup/results.json"))["counts"]["recorded_items"] == 5
for d in ("dup", "cut"):
    assert names(d + "/results.json") == names("s1/results.json"), d
    cases = [json.loads(l)["case"] for l in open(d + "/results.jsonl") if '"case"' in l]
    assert sorted(cases) == names("s1/results.json"), (d, cases)
assert names("m-resumed/results.json") == names("m/results.json")
PY
echo "merge_counts_items: items counted once, each with all its entries; --resume reruns the dropped"
