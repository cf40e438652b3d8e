#!/bin/sh
# check_include_cycles_test.sh CHECKER — the cycle check must fail on a loop: a tree where
# harness/x/a.c includes b.h and b.c includes a.h (a two-unit loop) and a third unit c that
# only includes a.h, which is no part of it; then the same tree with the loop cut passes.
set -u
checker=${1:?usage: check_include_cycles_test.sh CHECKER}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/harness/x"
printf '#include "a.h"\n#include "b.h"\n' >"$t/harness/x/a.c"
printf '#include "b.h"\n#include "a.h"\n' >"$t/harness/x/b.c"
printf '#include "a.h"\n' >"$t/harness/x/c.c"
: >"$t/harness/x/a.h"
: >"$t/harness/x/b.h"
: >"$t/harness/x/c.h"
out=$(python3 "$checker" "$t")
rc=$?
want='include loop: harness/x/a -> harness/x/b -> harness/x/a (units harness/x/a, harness/x/b)'
if [ "$rc" != 1 ] || ! printf '%s\n' "$out" | grep -qxF "$want"; then
    echo "FAIL: a two-unit loop: exit $rc (want 1), output:"
    printf '%s\n' "$out"
    exit 1
fi
printf '#include "b.h"\n' >"$t/harness/x/b.c"
out=$(python3 "$checker" "$t")
rc=$?
if [ "$rc" != 0 ] || [ "$out" != "no include loop among 3 units" ]; then
    echo "FAIL: the loop cut: exit $rc (want 0), output:"
    printf '%s\n' "$out"
    exit 1
fi
echo "ok: a loop fails with its cycle named, the tree without it passes"
