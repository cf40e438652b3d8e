#!/usr/bin/env bash
# check_citations.sh SRC — fails when a citation in the tree points nowhere (docs/testing.md):
#   - a "contracts §N" or "contracts.md §N" in harness/ ref/ reports/ gpu/ tests/ ci/ cases/
#     python/ docs/ or README.md whose N is not a section heading of docs/contracts.md
#     ("## N. ..." or "### N.M ...");
#   - a cited heading that is not one: README "Exit codes" or docs/findings.md, "Findings" (a heading
#     of that file), and a docs/PAGE.md named anywhere that does not exist;
#   - in docs/ and README.md (outside fenced code blocks): a relative link to a file that does
#     not exist, and a name in backticks that the tree does not have: a path (one with a '/',
#     or a file name ending in .c .h .hip .py .sh .cmake; `<name>` and '*' match anything; a
#     component in capitals such as DIR is a placeholder, not checked) that no file or folder
#     matches from the root, harness/, python/ or docs/; a C or Python identifier (one with an
#     '_', or starting a4w4/A4W4) that no source, test, script or case file contains; a
#     backend or mutant name (cpu-*, hip-*, mut-*, ref-*) no source contains. KNOWN_NAMES
#     below lists what the docs name on purpose without the tree having it;
#   - any citation of the team's fact sheet instead: SPEC followed by a section sign, the word
#     "section" or a section number (written here as "SPEC §N" so this file passes itself);
#   - a source comment citing an issue number: the word issue (either case), a space, an
#     optional '#', digits; external references such as ROCm/aiter#2900 or "PR #383" are fine.
# Prints one line per offender (FILE:LINE: what) and exits 1; exits 0 with one summary line
# when every citation resolves; exits 2 on bad usage.
set -u
src=${1:?usage: check_citations.sh SRC}
cd "$src" || exit 2
dirs=(harness ref reports gpu tests ci cases python examples docs README.md)
contracts=docs/contracts.md
bad=0

# Section numbers that are headings of docs/contracts.md, one per line ("5", "5.1", ...).
declare -A heading
if [ -f "$contracts" ]; then
  while IFS= read -r n; do heading[$n]=1; done < <(
    sed -nE 's/^#{2,3}[[:space:]]+([0-9]+(\.[0-9]+)?)\.?([[:space:]].*)?$/\1/p' "$contracts")
else
  echo "$contracts: missing (every contracts §N citation needs it)"; bad=1
fi

present=()
for d in "${dirs[@]}"; do [ -e "$d" ] && present+=("$d"); done
[ ${#present[@]} -eq 0 ] && { echo "check_citations: none of ${dirs[*]} under $src"; exit 2; }

# 1. contracts §N must name a heading. grep -o prints FILE:LINE:MATCH for each occurrence.
ncite=0
while IFS= read -r hit; do
  n=${hit##*§}
  ncite=$((ncite + 1))
  if [ -z "${heading[$n]:-}" ]; then
    echo "${hit%%:contracts*}: cites contracts §$n, which is not a heading of $contracts"; bad=1
  fi
done < <(grep -rInoE 'contracts(\.md)? §[0-9]+(\.[0-9]+)?' "${present[@]}")

# 2. No citation of SPEC sections (docs/contracts.md is what the tree cites).
while IFS= read -r hit; do
  echo "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): cites SPEC ('$(cut -d: -f3- <<<"$hit")'); cite contracts §N instead"
  bad=1
done < <(grep -rInoE 'SPEC(\.md)?[[:space:]]*(§[[:space:]]*[0-9]+(\.[0-9]+)?|[Ss]ections?[[:space:]]+[0-9]|[0-9]+(\.[0-9]+)?\b)' \
           "${present[@]}")

# 3. No issue numbers in source comments.
while IFS= read -r hit; do
  echo "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): cites an issue number ('$(cut -d: -f3- <<<"$hit")'); say what the code does instead"
  bad=1
done < <(grep -rInoE '[Ii]ssue #?[0-9]+' "${present[@]}")

# 4. Cited headings (README "Exit codes", docs/findings.md, "Findings"); named docs pages exist.
has_heading() { # FILE TEXT: is TEXT (a prefix of) a Markdown heading of FILE?
  [ -f "$1" ] && grep -qE "^#+ +\\\$?$(sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$2")" "$1"
}
while IFS= read -r hit; do
  where=$(cut -d: -f1,2 <<<"$hit"); text=$(cut -d: -f3- <<<"$hit")
  file=README.md
  [[ "$text" == docs/* ]] && file=${text%%.md*}.md
  heading=$(sed -E 's/^[^"]*"([^"]*)".*/\1/' <<<"$text")
  if ! has_heading "$file" "$heading"; then
    echo "$where: cites \"$heading\" of $file, which is no heading there"; bad=1
  fi
done < <(grep -rInoE '(README(\.md)?|docs/[a-z/_-]+\.md),? "[^"]+"' "${present[@]}" | grep -v '^docs/testing.md')
while IFS= read -r hit; do
  page=$(cut -d: -f3- <<<"$hit")
  [ -f "$page" ] || [[ "$page" == docs/cli/hello.md ]] || {
    echo "$(cut -d: -f1,2 <<<"$hit"): names $page, which does not exist"; bad=1; }
done < <(grep -rInoE 'docs/[a-z/_-]+\.md' "${present[@]}")

# 5. Names in backticks and relative links in docs/ and README.md.
# Named on purpose without the tree having them: the worked examples of docs/architecture.md
# (their files are written by tests/docs at build time), and facts of the sources
# docs/contracts.md states (AITER's, SGLang's, torch's and Triton's own names).
KNOWN_NAMES="harness/backends/mygemm.c harness/cli/cmd_hello.c tests/cli/hello.cmake
  docs/cli/hello.md cmd_hello a4w4_backend_mygemm cli_hello csv.h reports/gpu-nightly/nightly.log"
if [ -d docs ]; then
  declare -A known word
  for n in $KNOWN_NAMES; do known[$n]=1; done
  while IFS= read -r w; do word[$w]=1; done < <(grep -rhoE '[A-Za-z_][A-Za-z0-9_]*' harness ref \
    reports gpu tests ci cases python examples .github CMakeLists.txt 2>/dev/null | sort -u)
  for t in tests/cli/*.sh tests/cli/*.cmake; do  # the CTest names of the CLI tests
    n=${t##*/}; [[ "$t" == *.sh ]] && word[sh_${n%.sh}]=1 || word[cli_${n%.cmake}]=1
  done
  declare -A base
  while IFS= read -r f; do base[${f##*/}]=1; done < <(find . -path ./.git -prune -o \
    -path './build*' -prune -o -type f -print)
  path_exists() { # NAME: a file or folder matches it from the root, harness/, python/ or docs/
    local p=${1%/} b f
    while [[ "$p" == *'<'*'>'* ]]; do p=${p%%<*}*${p#*>}; done
    for b in "" harness/ python/ docs/; do
      for f in $b$p; do [ -e "$f" ] && return 0; done
    done
    if [[ "$p" != */* && "$p" != *'*'* ]]; then [ -n "${base[$p]:-}" ] && return 0; fi
    if [[ "$p" != */* ]]; then  # a file-name pattern: any file of the tree
      for f in "${!base[@]}"; do [[ "$f" == $p ]] && return 0; done
    fi
    return 1
  }
  is_path() { # NAME: a file name with an extension of the tree, or a path from one of its folders
    [[ "$1" =~ ^[A-Za-z0-9_.*\<\>/-]+$ ]] || return 1
    [[ "$1" =~ \.(c|h|hip|py|sh|cmake)$ ]] && return 0
    [[ "$1" == */* ]] || return 1
    [[ "$1" =~ \.(csv|json|md|yml|toml|txt|safetensors|contract)$ ]] && return 0
    local top=${1%%/*}
    [ -d "$top" ] || [ -d "harness/$top" ] || [ -d "python/$top" ] || [ -d "docs/$top" ]
  }
  nname=0
  while IFS=$'\t' read -r where name; do
    name=${name%()}
    [ -n "${known[$name]:-}" ] && continue
    if is_path "$name"; then
      # placeholders (a component in capitals: DIR, OUT), absolute and build paths
      [[ "$name" =~ (^|/)[A-Z][A-Z0-9_]*(/|\.|$) || "$name" == /* || "$name" == build* ]] && continue
      nname=$((nname + 1))
      path_exists "$name" || { echo "$where: names \`$name\`, which matches no file or folder"; bad=1; }
    elif [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && [[ "$name" == *_* || "$name" =~ ^(a4w4|A4W4) ]]; then
      nname=$((nname + 1))
      [ -n "${word[$name]:-}" ] || { echo "$where: names \`$name\`, which no source, test, script or case file contains"; bad=1; }
    elif [[ "$name" =~ ^(cpu|hip|mut|ref)-[a-z0-9x-]+$ ]]; then
      nname=$((nname + 1))
      grep -rqF -- "\"$name" harness tests || { echo "$where: names backend \`$name\`, which no source defines"; bad=1; }
    fi
  done < <(find docs -name '*.md' -print0 | xargs -0 awk '
      FNR == 1 { fence = 0 }
      /^[[:space:]]*```/ { fence = !fence; next }
      !fence { s = $0
        while (match(s, /`[^`]+`/)) {
          printf "%s:%d\t%s\n", FILENAME, FNR, substr(s, RSTART + 1, RLENGTH - 2)
          s = substr(s, RSTART + RLENGTH) } }' README.md)
  while IFS=$'\t' read -r where target; do
    page=${where%%:*}; t=${target%%#*}
    [ -z "$t" ] && continue
    [[ "$t" =~ ^[a-z]+: ]] && continue
    [ -e "$(dirname "$page")/$t" ] || { echo "$where: links to $target, which does not exist"; bad=1; }
  done < <(find docs -name '*.md' -print0 | xargs -0 awk '
      { s = $0
        while (match(s, /\]\([^) ]+\)/)) {
          printf "%s:%d\t%s\n", FILENAME, FNR, substr(s, RSTART + 2, RLENGTH - 3)
          s = substr(s, RSTART + RLENGTH) } }' README.md)
fi

if [ "$bad" = 0 ]; then
  echo "citations: $ncite contracts § citations name headings of $contracts; no SPEC sections, no issue numbers; ${nname:-0} names in docs/ exist"
fi
exit $bad
