#!/usr/bin/env bash
# check_citations.sh SRC — fails when a citation in the tree points nowhere (docs/architecture.md):
#   - a "contracts §N" or "contracts.md §N" in harness/ ref/ reports/ gpu/ tests/ ci/ cases/
#     whose N is not a section heading of docs/contracts.md ("## N. ..." or "### N.M ...");
#   - any citation of the team's fact sheet instead: SPEC followed by a section sign, the word
#     "section" or a section number (written here as "SPEC §N" so this file passes itself);
#   - a source comment citing an issue number: the word issue (either case), a space, an
#     optional '#', digits; external references such as ROCm/aiter#2900 or "PR #383" are fine.
# Prints one line per offender (FILE:LINE: what) and exits 1; exits 0 with one summary line
# when every citation resolves; exits 2 on bad usage.
set -u
src=${1:?usage: check_citations.sh SRC}
cd "$src" || exit 2
dirs=(harness ref reports gpu tests ci cases)
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
for d in "${dirs[@]}"; do [ -d "$d" ] && present+=("$d"); done
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

if [ "$bad" = 0 ]; then
  echo "citations: $ncite contracts § citations name headings of $contracts; no SPEC sections, no issue numbers"
fi
exit $bad
