#!/usr/bin/env bash
# A plugin's own text (its name, its gemm messages) reaches the stderr lines, results.json and
# the reports quoted: printable ASCII, every other byte as \xNN (harness/backends/plugin.c).
# Reproducer (before the fix): a plugin returning n/a or an error with the message
# "line one\nline \"two\" \xff\xfe \xc3( end\r": results.json held the bytes 0xff 0xfe
# (no UTF-8: python's json.load raised UnicodeDecodeError) and report --format junit wrote a
# junit.xml that xmllint refused ("Input is not proper UTF-8").
. "$(dirname "$0")/common.sh.inc"
small_cases 2 > c.csv # a: M 4 (n/a), b: M 8 (n/a); e: M 3 below
printf 'e,3,32,256,normal,5,\n' >> c.csv
code "$CLI" run --cases c.csv --no-golden --no-call-sequence \
  --backend "plugin:$P/liba4w4_rawtext_plugin.so" --out r
[ "$rc" = 1 ] || { cat err.txt; fail "run: exit $rc, expected 1 (e fails with an error)"; }
grep -q 'gemm failed with -1: line one\\x0aline "two" \\xff\\xfe \\xc3( end\\x0d' err.txt ||
  { cat err.txt; fail "the error line does not quote the plugin's message"; }
grep -q 'plugin raw-text\\x0a\\xff-plugin: gemm failed' err.txt ||
  { cat err.txt; fail "the error line does not quote the plugin's name"; }
python3 - <<'PY'
import json
doc = json.load(open("r/results.json", encoding="utf-8", errors="strict"))
notes = {e["name"]: e.get("note", "") for e in doc["cases"] if e["backend"] != "oracle"}
assert notes["a"] == 'line one\\x0aline "two" \\xff\\xfe \\xc3( end\\x0d', notes
PY
"$CLI" report r --format all --out rep --quiet || fail "report: exit $?"
python3 -c "import xml.dom.minidom as m; m.parse('rep/junit.xml')" ||
  fail "junit.xml is no well-formed XML"
echo "plugin text quoted in stderr, results.json and junit.xml"
