#!/usr/bin/env bash
# check_includes.sh SRC — fails when an #include "…" goes against the dependency direction
# (docs/architecture.md):
#   ref/ and gpu/ include only their own headers; reports/ includes only its own;
#   harness rooms: io <- gen <- engine <- discover, commands, layer <- backends <- api <- cli (a
#   room includes its own and lower rooms, never a sibling of its rank; backends/hip/ counts
#   as backends), plus ref/, gpu/ and reports/ headers.
# Prints one line per violation: FILE: includes HEADER (ROOM) from ROOM.
set -u
src=${1:?usage: check_includes.sh SRC}
cd "$src" || exit 2

room_of() { # path relative to src -> room name
  case $1 in
    ref/*) echo ref ;; gpu/*) echo gpu ;; reports/*) echo reports ;;
    harness/io/*) echo io ;; harness/gen/*) echo gen ;; harness/engine/*) echo engine ;;
    harness/discover/*) echo discover ;;
    harness/commands/*) echo commands ;;
    harness/layer/*) echo layer ;;
    harness/backends/*) echo backends ;; harness/api/*) echo api ;; harness/cli/*) echo cli ;;
    *) echo other ;;
  esac
}
rank() {
  case $1 in
    io) echo 1 ;; gen) echo 2 ;; engine) echo 3 ;; discover | commands | layer) echo 4 ;;
    backends) echo 5 ;; api) echo 6 ;; cli) echo 7 ;; *) echo 0 ;;
  esac
}

# header basename -> room (every header name is unique across the tree; checked below)
declare -A where
bad=0
while IFS= read -r h; do
  b=${h##*/}
  if [ -n "${where[$b]:-}" ] && [ "${where[$b]}" != "$(room_of "$h")" ]; then
    echo "$h: header name also used in room ${where[$b]}"; bad=1
  fi
  where[$b]=$(room_of "$h")
done < <(find ref gpu reports harness -name '*.h' | sort)

allowed() { # from-room to-room -> 0 when allowed
  local f=$1 t=$2
  [ "$f" = "$t" ] && return 0
  case $f in
    ref|gpu|reports) return 1 ;;
    io|gen|engine|discover|commands|layer|backends|api|cli)
      case $t in
        ref|gpu|reports) return 0 ;;
        *) [ "$(rank "$t")" -lt "$(rank "$f")" ] ;; # lower rooms only: siblings stay apart
      esac ;;
    *) return 0 ;;
  esac
}

while IFS= read -r f; do
  fr=$(room_of "$f")
  while IFS= read -r inc; do
    tr=${where[$inc]:-}
    [ -z "$tr" ] && continue # generated or system header
    if ! allowed "$fr" "$tr"; then
      echo "$f: includes $inc ($tr) from $fr"; bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | sed 's#.*/##')
done < <(find ref gpu reports harness \( -name '*.c' -o -name '*.h' -o -name '*.hip' \) | sort)

# The engine (and io below it) sees a backend only through engine/backend.h and never names one:
# no string literal there starts with a registered type's name and ':' ("plugin:...") or is
# a system under test's name ("cpu-asm").
while IFS= read -r n; do
  pat="\"$n:"; [[ "$n" == *-* ]] && pat="\"$n:|\"$n\""
  while IFS= read -r hit; do
    echo "$hit: names backend $n (the engine never names one: ask the backend type)"; bad=1
  done < <(grep -nE "$pat" harness/{io,gen,engine,discover,commands,layer}/*.c 2>/dev/null)
done < <(grep -rhoE '\.name = "[^"]+"' harness/backends | sed 's/.*"\(.*\)"/\1/' | sort -u)

# The C library (harness/api) judges through engine/judge.h, never the runner's own header.
while IFS= read -r hit; do
  echo "$hit: the library includes runner.h (it judges through judge.h: a4w4_judge_outputs)"; bad=1
done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*/)?runner(_internal)?\.h"' \
  harness/api/*.c harness/api/*.h 2>/dev/null)

if [ "$bad" = 0 ]; then echo "layering: every include follows io <- gen <- engine <- discover, commands, layer <- backends <- api <- cli; ref/, gpu/, reports/ stand alone"; fi
exit $bad
