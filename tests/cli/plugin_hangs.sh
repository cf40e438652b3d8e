#!/usr/bin/env bash
# A plugin that hangs on every call costs --max-timeouts deadlines, not one per case: after N
# calls in a row time out (default 2) the backend's remaining entries fail at once as "not run"
# (harness/engine/runner.c counted_run), the other backends go on. Reproducer (before the fix):
# the hang plugin on cases all with M > 1 and --timeout 1 timed out on every one of them
# (the edge set at the default timeout: about 35 minutes). Each entry's signature names the
# abort once ("not run: backend hung ...", never "not run: not run: ...") with no trailing "; ".
. "$(dirname "$0")/common.sh.inc"
{ echo "name,M,N,K,regime,seed,tags"; for i in 1 2 3 4 5; do echo "h$i,2,32,64,normal,$i,"; done; } > c.csv

# hangs OUT WANT_TIMED_OUT [run options]: exit 1; WANT_TIMED_OUT entries timed out, the rest
# not run; every cpu-fallback entry passes
hangs() {
  local out=$1 want=$2 rc; shift 2
  set +e
  timeout 120 "$CLI" run --cases c.csv --no-golden --quiet --out "$out" --timeout 1 \
    --backend "cpu-fallback,plugin:$P/liba4w4_hang_plugin.so" "$@" > "$out.log" 2>&1
  rc=$?
  set -e
  [ "$rc" = 1 ] || { cat "$out.log"; fail "$out: exit $rc, expected 1"; }
  python3 - "$out/results.json" "$want" <<'PY' || fail "$out: entries are not what they must be"
import json, sys
doc, want = json.load(open(sys.argv[1])), int(sys.argv[2])
es = [e for e in doc["cases"] if e["backend"].startswith("plugin:")
      and not e["name"].endswith("/call-sequence")]  # the sequence: checked below
got = [e.get("aborted") for e in es]
seq = [e for e in doc["cases"] if e["name"].endswith("/call-sequence")]
assert len(seq) == 1 and seq[0]["verdict"] == "fail" and seq[0].get("aborted"), seq
assert got == ["timed out"] * want + ["not run"] * (5 - want), got
for e in es[want:]:
    assert e["verdict"] == "fail" and e["note"].startswith("not run: backend hung %d times in a row" % want), e
# the signature names the abort once and ends with the note: no "not run: not run:", no "; "
for e in es[:want]:
    assert e["signature"] == "timed out: " + e["note"] and e["note"].endswith("after 1 s"), e
for e in es[want:]:
    assert e["signature"] == e["note"] and not e["signature"].endswith(";"), e
assert all(e["verdict"] == "pass" for e in doc["cases"] if e["backend"] == "cpu-fallback")
assert doc["counts"]["recorded_items"] == 5
PY
  echo "$out: $want timed out, $((5 - want)) not run"
}
hangs default 2
hangs three 3 --max-timeouts 3
echo "plugin_hangs: a hung backend stops being called"
