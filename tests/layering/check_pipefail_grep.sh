#!/usr/bin/env bash
# check_pipefail_grep.sh SRC — fails when a script under tests/, ci/ or .ci/ pipes a program
# that writes its output in many writes (ldd, ldconfig, find, nm, objdump, readelf, strings)
# straight into `grep -q`. Under `set -o pipefail` such a pipeline fails at random: grep exits at
# the first match, the writer's next write gets SIGPIPE and the pipeline's status is 141. Read the
# output whole first (`libs=$(ldd X)`, then `grep -q PAT <<< "$libs"`).
# Prints FILE:LINE: the line for each offender and exits 1; exits 0 with one summary line.
set -euo pipefail
SRC=${1:?usage: check_pipefail_grep.sh SRC}
cd "$SRC"
mapfile -t scripts < <(git ls-files -- 'tests/*.sh' 'tests/*.inc' 'ci/*' '.ci/*' 2>/dev/null ||
  find tests ci .ci -type f \( -name '*.sh' -o -name '*.inc' -o -name run \))
bad=0
for f in "${scripts[@]}"; do
  [ -f "$f" ] || continue
  # line numbers kept, comments (whole-line, or after a blank) dropped
  hits=$(grep -n '' "$f" | sed -E 's/^([0-9]+:)[[:space:]]*#.*$/\1/; s/[[:space:]]#.*$//' |
    grep -E '(^|[^[:alnum:]_])(ldd|ldconfig|find|nm|objdump|readelf|strings)[[:space:]][^|]*\|[[:space:]]*grep[[:space:]]+(-[[:alnum:]]*q|--quiet)' || true)
  [ -z "$hits" ] || { sed "s|^|$f:|" <<< "$hits"; bad=1; }
done
[ "$bad" = 0 ] || { echo "check_pipefail_grep: read the writer's output whole before grep -q (see this file's head)"; exit 1; }
echo "check_pipefail_grep: ${#scripts[@]} scripts, no multi-write program piped into grep -q"
