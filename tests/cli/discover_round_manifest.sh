#!/usr/bin/env bash
# `discover --probes P` finds a round's probes already written by the hash in P/r<k>/manifest.json
# (harness/cli/discover_flow.c) and writes them again only when the hash differs. Reproducer
# (before the fix): the manifest of a round larger than 1 MiB (many probes, or spacing added by
# a tool that rewrote it) was read with a 1 MiB cap; the failed read counted as "another round"
# and every rerun wrote the whole round again ("writing the probes to P/r1"). An unreadable
# manifest (a FIFO) is refused with one line naming it, exit 2, and nothing is rewritten.
. "$(dirname "$0")/common.sh.inc"

code "$CLI" discover --write-probes m --shapes 24x8x512
[ "$rc" = 0 ] || { cat err.txt; fail "--write-probes: exit $rc"; }
man=m/r1/manifest.json
hash=$(sed -n 's/.*"matrix_hash":[[:space:]]*"\([^"]*\)".*/\1/p' "$man")
[ -n "$hash" ] || fail "no matrix_hash in $man"

# the same manifest padded past 1 MiB with JSON whitespace: still this round's
{ head -c -2 "$man"; head -c 1200000 /dev/zero | tr '\0' ' '; tail -c 2 "$man"; } > big.json
mv big.json "$man"
[ "$(stat -c %s "$man")" -gt 1048576 ] || fail "the padded manifest is not over 1 MiB"
before=$(stat -c %Y.%s "$man")
code "$CLI" discover --backend bundle:mo --probes m --out c.txt --no-evidence
[ "$rc" = 5 ] || { cat err.txt; fail "--probes before the outputs: exit $rc, expected 5"; }
! grep -q "writing the probes to m/r1" err.txt || fail "a round written with this hash was written again: $(cat err.txt)"
grep -q "run the kernel on them into mo/r1" err.txt || { cat err.txt; fail "no instruction"; }
[ "$(stat -c %Y.%s "$man")" = "$before" ] || fail "the manifest was rewritten"

# a manifest that cannot be read is refused, not silently replaced
rm "$man" && mkfifo "$man"
code timeout 20 "$CLI" discover --backend bundle:mo --probes m --out c.txt --no-evidence
[ "$rc" = 2 ] || { cat err.txt; fail "a FIFO manifest: exit $rc, expected 2"; }
[ "$(wc -l < err.txt)" = 1 ] && grep -q "m/r1/manifest.json: not a regular file" err.txt ||
  { cat err.txt; fail "a FIFO manifest: not one line naming it"; }
[ -p "$man" ] || fail "the FIFO manifest was replaced"
echo "discover_round_manifest: a round over 1 MiB is found by its hash; an unreadable one refused"
