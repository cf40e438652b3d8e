#!/bin/sh
# check_citations_test.sh CHECKER — the citation check must fail on each of its rules: in a
# small tree, a contracts § that is no heading, a SPEC section, an issue number, a cited heading
# that is none, a docs page that does not exist, and in docs/: a path, an identifier and a
# backend name the tree does not have and a link to no file, each with its FILE:LINE; names
# in a fenced block are not checked. The same tree with every citation true passes.
set -u
checker=${1:?usage: check_citations_test.sh CHECKER}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# S: the section sign, I: the word issue, D: docs, R: README, written so that this file passes
# the check itself
S=$(printf '\302\247') I=issue D=docs R=README
mkdir -p "$t/docs" "$t/harness/io" "$t/tests/cli"
printf '# Contracts\n## 1. Scope\n### 1.2 Rounding\n' >"$t/docs/contracts.md"
printf '# Findings\n' >"$t/docs/findings.md"
printf '# Tool\n## Exit codes\nSee [findings](docs/findings.md).\n' >"$t/README.md"
printf 'int real_name; const char *b = "cpu-real";\n' >"$t/harness/io/io.c"
: >"$t/tests/cli/real_test.sh"
cat >"$t/harness/io/bad.c" <<C
/* contracts ${S}1.2 holds; contracts.md ${S}1 too; contracts ${S}3 does not */
/* SPEC ${S}4 is cited */
/* see $I #12 and ROCm/aiter#2900 */
/* $R "Exit codes" and $R "Options", $D/findings.md, "Findings" and $D/findings.md, "Nope" */
/* $D/findings.md and $D/gone.md */
C
cat >"$t/$D/page.md" <<P
# Page
\`harness/io/io.c\`, \`harness/io/gone.c\`, \`real_name\`, \`gone_name\`, \`sh_real_test\`,
\`cpu-real\`, \`cpu-gone\`, \`DIR/x.c\`, \`io.c\`, \`*.c\`
[ok](findings.md) [gone](gone.md) [web](https://example.com)
\`\`\`
\`fenced_name\`
\`\`\`
P
out=$(python3 "$checker" "$t" | LC_ALL=C sort)
rc=$?
want="$D/page.md:2: names \`gone_name\`, which no source, test, script or case file contains
$D/page.md:2: names \`harness/io/gone.c\`, which matches no file or folder
$D/page.md:3: names backend \`cpu-gone\`, which no source defines
$D/page.md:4: links to gone.md, which does not exist
harness/io/bad.c:1: cites contracts ${S}3, which is not a heading of docs/contracts.md
harness/io/bad.c:2: cites SPEC ('SPEC ${S}4'); cite contracts ${S}N instead
harness/io/bad.c:3: cites an $I number ('$I #12'); say what the code does instead
harness/io/bad.c:4: cites \"Nope\" of $D/findings.md, which is no heading there
harness/io/bad.c:4: cites \"Options\" of $R.md, which is no heading there
harness/io/bad.c:5: names $D/gone.md, which does not exist"
if [ "$out" != "$want" ]; then
    echo "FAIL: one planted citation per rule, output:"
    printf '%s\n' "$out"
    exit 1
fi
python3 "$checker" "$t" >/dev/null && { echo "FAIL: planted citations: exit 0"; exit 1; }
printf '/* contracts %s1.2 holds */\n' "$S" >"$t/harness/io/bad.c"
printf '# Page\n`harness/io/io.c`, `real_name`, `cpu-real`, [ok](findings.md)\n' >"$t/$D/page.md"
out=$(python3 "$checker" "$t")
rc=$?
if [ "$rc" != 0 ]; then
    echo "FAIL: every citation true: exit $rc (want 0), output:"
    printf '%s\n' "$out"
    exit 1
fi
echo "ok: each rule's planted citation fails with its FILE:LINE, the true tree passes"
