#!/usr/bin/env bash
# `discover --shapes` and `--write-probes` refuse what cannot be built before building it, and
# leave no partial files on any failure (harness/cli/discover_flow.c, discover/discover.c
# a4w4_discover_write_round). Reproducers (before the fix):
#   discover --write-probes P --shapes 4194304x4194304x262144
#     -> exit 4 "out of memory building the operands", P/discover.json and an empty P/r1 left
#        (run refuses the same shape, exit 2, by the shape rule);
#   a round that cannot be written (P/r1 a file) -> P/discover.json left naming no round.
. "$(dirname "$0")/common.sh.inc"

# the shape rule, as run applies it: exit 2, one line, nothing created
code "$CLI" discover --write-probes big --shapes 24x8x512,4194304x4194304x262144
[ "$rc" = 2 ] || { cat err.txt; fail "unallocatable shape: exit $rc, expected 2"; }
grep -q "discover: --shapes: M=4194304 N=4194304 K=262144 breaks the shape rule" err.txt ||
  { cat err.txt; fail "the refusal does not name the shape rule"; }
[ ! -e big ] || fail "the refused --write-probes left $(find big)"
code "$CLI" discover --backend cpu-asm --shapes 4194304x4194304x262144 --out d.txt
[ "$rc" = 2 ] || { cat err.txt; fail "discover --backend with the shape: exit $rc, expected 2"; }
printf 'name,M,N,K,regime,seed,tags\nbig,4194304,4194304,262144,normal,1,\n' > big.csv
code "$CLI" run --cases big.csv --no-golden --backend cpu-asm --out r
[ "$rc" = 2 ] && grep -q "breaks the shape rule" err.txt || { cat err.txt; fail "run: exit $rc"; }

# the round cannot be written: no plan left behind
mkdir p1 && : > p1/r1
code "$CLI" discover --write-probes p1 --shapes 24x8x512
[ "$rc" = 4 ] || { cat err.txt; fail "r1 a file: exit $rc, expected 4"; }
[ "$(ls p1)" = r1 ] || fail "r1 a file: left $(ls p1)"

# the plan cannot be written (discover.json a non-empty directory): the round is removed
mkdir -p p2/discover.json/x
code "$CLI" discover --write-probes p2 --shapes 24x8x512
[ "$rc" = 4 ] || { cat err.txt; fail "plan not writable: exit $rc, expected 4"; }
[ ! -e p2/r1 ] || fail "plan not writable: the round was left: $(ls p2/r1)"

# and a good one writes both
code "$CLI" discover --write-probes p3 --shapes 24x8x512
[ "$rc" = 0 ] && [ -f p3/discover.json ] && [ -f p3/r1/manifest.json ] || { cat err.txt; fail "good: exit $rc"; }
echo "discover_write_probes: refused up front, no partial files"
