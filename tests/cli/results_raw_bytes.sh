#!/usr/bin/env bash
# Raw bytes that are not UTF-8 in what a run records (a --cases path, a plugin path in its
# backend name, --upstream-version, --out) reach results.json as \xNN escapes (the writer's
# guard, harness/io/results.h a4w4_json_text_guard), so that the document stays JSON and every
# report rendered from it stays well-formed. Reproducer (before the fix): python3's json.load of
# results.json failed (UnicodeDecodeError: byte 0xff), and junit.xml carried the raw byte.
. "$(dirname "$0")/common.sh.inc"
X=$'\xff'
small_cases 2 > "c$X.csv"
cp "$P/liba4w4_ref_plugin.so" "lib$X.so"
run() { "$CLI" run --cases "c$X.csv" --no-golden --no-call-sequence --backend "plugin:./lib$X.so" \
  --upstream-version "v$X" --out "out$X" --quiet "$@"; }
code run
[ "$rc" = 0 ] || { cat err.txt; fail "the run: exit $rc, expected 0 (every output matches)"; }
/usr/bin/python3 - "out$X" <<'PY' || fail "results.json or results.jsonl is not JSON"
import json, os, sys
d = os.fsencode(sys.argv[1])
doc = json.load(open(os.path.join(d, b"results.json"), encoding="utf-8"))
assert doc["upstream_version"] == "v\\xff", doc["upstream_version"]
assert doc["cases_file"].endswith("c\\xff.csv"), doc["cases_file"]
assert "plugin:./lib\\xff.so" in doc["backends"], doc["backends"]
assert doc["verdict"] == "PASS", doc["verdict"]
for line in open(os.path.join(d, b"results.jsonl"), encoding="utf-8"):
    json.loads(line)
PY
code run --resume   # the guarded header is this run's identity too
[ "$rc" = 0 ] || { cat err.txt; fail "--resume: exit $rc, expected 0"; }
"$CLI" report "out$X" --format all --quiet || fail "report: exit $?"
xmllint --noout "out$X/junit.xml" || fail "junit.xml is not well-formed XML"
grep -q 'lib\\xff.so' "out$X/junit.xml" || fail "junit.xml does not show the escaped name"
"$CLI" merge --out "m$X" "out$X" > /dev/null 2>&1 || fail "merge: exit $?"
/usr/bin/python3 -c 'import json,os,sys; json.load(open(os.fsencode(sys.argv[1]), encoding="utf-8"))' \
  "m$X/results.json" || fail "merge's results.json is not JSON"
echo "results.json stays JSON and junit.xml XML over raw bytes"
