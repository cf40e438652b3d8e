#!/bin/sh
# check_pipefail_grep_test.sh CHECKER — the pipefail check must fail on a many-write program
# piped into grep -q: in a small git tree, ldd, find and nm piped into grep -q, --quiet and
# -cq in tests/ and ci/ scripts each fail with FILE:LINE:the line; the same pipes in a
# comment, into grep without -q, or from a program not on the list pass.
set -u
checker=${1:?usage: check_pipefail_grep_test.sh CHECKER}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tests/cli" "$t/ci"
# L, F, N: ldd, find, nm, so that this file passes the check itself
L=ldd F=find N=nm
{
    printf '%s "$x" | grep -q libfoo\n' "$L"
    printf '  # %s . | grep -q x\n# %s x | grep -q y\n' "$F" "$L"
    printf 'echo ok # %s . | grep -q x\n' "$F"
    printf 'n=$(%s . -name x | grep --quiet y)\n' "$F"
    printf 'strings a | grep -v b\nmystrings a | grep -q b\n'
} >"$t/tests/cli/a.sh"
printf '%s -D lib.so|grep -cq sym\n' "$N" >"$t/ci/run"
git init -q "$t" && git -C "$t" add -A || { echo "FAIL: no git tree"; exit 1; }
out=$(python3 "$checker" "$t")
rc=$?
want="ci/run:1:$N -D lib.so|grep -cq sym
tests/cli/a.sh:1:$L \"\$x\" | grep -q libfoo
tests/cli/a.sh:5:n=\$($F . -name x | grep --quiet y)"
if [ "$rc" != 1 ] || [ "$(printf '%s\n' "$out" | grep -v '^check_pipefail_grep:')" != "$want" ]; then
    echo "FAIL: three pipes into grep -q: exit $rc (want 1), output:"
    printf '%s\n' "$out"
    exit 1
fi
printf 'libs=$(%s "$x")\n' "$L" >"$t/tests/cli/a.sh"
printf '%s -D lib.so >syms\n' "$N" >"$t/ci/run"
out=$(python3 "$checker" "$t")
rc=$?
if [ "$rc" != 0 ]; then
    echo "FAIL: the output read whole first: exit $rc (want 0), output:"
    printf '%s\n' "$out"
    exit 1
fi
echo "ok: each pipe into grep -q fails with its line, the output read whole passes"
