#!/usr/bin/env bash
# ci/find-deps.sh — are the libraries the a4w4check CLI links here? cJSON and OpenBLAS (found
# with pkg-config, as CMakeLists.txt finds them) and libcsv (no .pc file: csv.h and -lcsv
# through the C compiler, as ref/CMakeLists.txt links it). Criterion is not checked: the
# nightly builds with -DBUILD_TESTING=OFF, which needs no Criterion.
#
# A4W4_DEPS_PREFIX=P: a prefix of unpacked packages (e.g. `bash ci/unpack-debs.sh DEBDIR P`
# on a machine without Debian's -dev packages); P's pkgconfig, include and lib folders are
# searched before the system's.
# Usage: eval "$(bash ci/find-deps.sh)" || exit 2
# stdout: export lines (PKG_CONFIG_PATH, CMAKE_PREFIX_PATH, CPATH, LIBRARY_PATH,
#         LD_LIBRARY_PATH, PATH) that make CMake and the built CLI use the prefix; nothing
#         without one.
# Exit: 0 all found; 2 something missing: one line on stderr per missing library, naming it
#       and how to provide it.
set -uo pipefail
P=${A4W4_DEPS_PREFIX:-}
CC=${CC:-cc}
ma=$(uname -m)-linux-gnu
exports=()
addpath() { # VAR DIR: prepend DIR to VAR here and in the printed exports
  local var=$1 dir=$2
  [ -d "$dir" ] || return 0
  export "$var=$dir${!var:+:${!var}}"
  exports+=("export $var=$(printf %q "$dir")\${$var:+:\$$var}")  # quoted: the line is eval'd
}
if [ -n "$P" ]; then
  if [ ! -d "$P" ]; then
    echo "find-deps: A4W4_DEPS_PREFIX=$P: no such directory (make one with: bash ci/unpack-debs.sh DEBDIR $P)" >&2
    exit 2
  fi
  for l in "$P/lib" "$P/lib64" "$P/usr/lib" "$P/usr/lib/$ma" "$P/usr/lib/$ma/openblas-pthread"; do
    addpath PKG_CONFIG_PATH "$l/pkgconfig"
    [ -d "$l" ] && ls "$l"/lib*.so* >/dev/null 2>&1 &&
      { addpath LIBRARY_PATH "$l"; addpath LD_LIBRARY_PATH "$l"; }
  done
  addpath PKG_CONFIG_PATH "$P/usr/share/pkgconfig"
  addpath CPATH "$P/include"
  addpath CPATH "$P/usr/include"
  addpath CMAKE_PREFIX_PATH "$P"
  addpath CMAKE_PREFIX_PATH "$P/usr"
  if ! command -v pkg-config >/dev/null 2>&1 && [ -x "$P/usr/bin/pkgconf" ]; then
    ln -sf pkgconf "$P/usr/bin/pkg-config" 2>/dev/null
    addpath PATH "$P/usr/bin"
  fi
fi
# how to provide a missing library: its Debian -dev package, or the .debs unpacked into a prefix
how() { # DEV_PKG DEBS...
  local dev=$1; shift
  echo "install Debian's $dev, or unpack Debian 12's .debs into a prefix (apt-get download $*;" \
       "bash ci/unpack-debs.sh DEBDIR PREFIX) and set A4W4_DEPS_PREFIX=PREFIX (docs/nightly.md)"
}
missing=0
miss() { echo "find-deps: missing $1: $2" >&2; missing=$((missing + 1)); }
if ! command -v pkg-config >/dev/null 2>&1; then
  miss "pkg-config" "$(how pkgconf pkgconf pkgconf-bin libpkgconf3)"
else
  pkg-config --exists libcjson ||
    miss "cJSON (pkg-config module libcjson)" "$(how libcjson-dev libcjson1 libcjson-dev)"
  pkg-config --exists openblas ||
    miss "OpenBLAS (pkg-config module openblas)" \
      "$(how libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-dev libopenblas-pthread-dev libgfortran5 libquadmath0)"
fi
if ! command -v "$CC" >/dev/null 2>&1; then
  miss "a C compiler (CC=$CC)" "install gcc or set CC"
else
  tmp=$(mktemp -d) || exit 2
  printf '#include <csv.h>\nint main(void) { struct csv_parser p; return csv_init(&p, 0); }\n' >"$tmp/t.c"
  "$CC" "$tmp/t.c" -o "$tmp/t" -lcsv >"$tmp/log" 2>&1 ||
    miss "libcsv (csv.h and -lcsv with $CC; it has no .pc file)" "$(how libcsv-dev libcsv3 libcsv-dev)"
  rm -rf "$tmp"
fi
[ $missing -eq 0 ] || exit 2
for e in "${exports[@]+"${exports[@]}"}"; do echo "$e"; done
exit 0
