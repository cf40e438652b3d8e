#!/usr/bin/env bash
# The Debug flags (-O0, as a coverage build alone uses, CMakeLists.txt) are warning
# clean too: some warnings (-Wformat-truncation in cmd_bench.c was one) show only without
# optimization, where the default RelWithDebInfo build never sees them. Compiles every
# source of ref/, reports/ and harness/ (the CPU rooms) at -O0 with the project's warning
# flags and -Werror. To assembly, thrown away (-S -o /dev/null): every warning comes from the
# compiler proper (cc1), middle-end ones such as -Wformat-truncation included, which
# -fsyntax-only would not run; the assembler adds none.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
: "$CLI"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "debug_warnings: no C compiler ($cc)"; exit 1; }
# the version, from its one source (CMakeLists.txt defines it the same way)
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/a4w4check/__init__.py)
flags=(-std=c11 -O0 -Wall -Wextra -ffp-contract=off -Werror -fopenmp -D_POSIX_C_SOURCE=200809L
       -DA4W4_SOURCE_DIR="\"$SRC\"" -DA4W4_TOOL_VERSION="\"$version\"" -Iref -Ireports
       -Iharness/io -Iharness/gen -Iharness/engine -Iharness/discover -Iharness/commands
       -Iharness/layer -Iharness/backends -Iharness/cli)
read -r -a pc <<< "$(pkg-config --cflags libcjson openblas)"
fails=0
for f in ref/*.c reports/*.c harness/io/*.c harness/gen/*.c harness/engine/*.c \
         harness/discover/*.c harness/commands/*.c harness/layer/*.c harness/backends/*.c \
         harness/cli/*.c; do
  if ! "$cc" "${flags[@]}" "${pc[@]}" -S "$f" -o /dev/null 2> "$WORK/err"; then
    echo "$f:"; head -n 20 "$WORK/err"; fails=$((fails + 1))
  fi
done
[ "$fails" -eq 0 ] || { echo "debug_warnings: $fails sources warn at -O0"; exit 1; }
echo "debug_warnings: every CPU source is warning clean at -O0"
