#!/usr/bin/env bash
# ci/find-deps.sh, the nightly's dependency check: with no library visible it stops with exit 2
# and one line per missing library naming it and how to provide it; a prefix of unpacked
# packages (A4W4_DEPS_PREFIX) is searched; and a -DBUILD_TESTING=OFF configure needs no
# Criterion (configure only, with Criterion's .pc hidden, and looks nothing of it up), while a
# testing one fails with Criterion named in its error.
set -euo pipefail
SRC=$2 WORK=$3   # $1 (the CLI) is not needed
rm -rf "$WORK"; mkdir -p "$WORK/empty" "$WORK/bin"
cd "$SRC"
command -v pkg-config >/dev/null || { echo "no pkg-config here"; exit 77; }
# a compiler that links everything but libcsv: this machine without libcsv-dev
cat > "$WORK/bin/cc-no-csv" <<'CC'
#!/bin/sh
for a in "$@"; do [ "$a" = -lcsv ] && { echo "cannot find -lcsv" >&2; exit 1; }; done
exec cc "$@"
CC
chmod +x "$WORK/bin/cc-no-csv"

set +e
PKG_CONFIG_LIBDIR=$WORK/empty PKG_CONFIG_PATH='' CC=$WORK/bin/cc-no-csv A4W4_DEPS_PREFIX='' \
  bash ci/find-deps.sh > "$WORK/out" 2> "$WORK/err"
rc=$?
set -e
cat "$WORK/err"
[ $rc -eq 2 ] || { echo "exit $rc, expected 2 with every library missing"; exit 1; }
[ ! -s "$WORK/out" ] || { echo "exports printed although libraries are missing"; exit 1; }
[ "$(wc -l < "$WORK/err")" -eq 3 ] || { echo "expected one line per missing library (3)"; exit 1; }
grep -q "missing cJSON.*libcjson-dev.*A4W4_DEPS_PREFIX" "$WORK/err"
grep -q "missing OpenBLAS.*libopenblas-dev.*ci/unpack-debs.sh" "$WORK/err"
grep -q "missing libcsv.*libcsv-dev" "$WORK/err"

# the nightly host script stops there too: exit 2 before any build, the same lines
set +e
PKG_CONFIG_LIBDIR=$WORK/empty PKG_CONFIG_PATH='' CC=$WORK/bin/cc-no-csv A4W4_DEPS_PREFIX='' \
  A4W4_GPU=nvidia REPORT_DIR=$WORK/nightly BUILD_DIR=$WORK/nightly-build \
  bash ci/nightly-gpu.sh > "$WORK/nightly.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$WORK/nightly.out"; echo "nightly-gpu.sh: exit $rc, expected 2"; exit 1; }
for lib in cJSON OpenBLAS libcsv; do grep -q "^find-deps: missing $lib" "$WORK/nightly.out"; done
[ ! -e "$WORK/nightly-build" ]

# the same libraries in a prefix: found there, and the exports point at it
pcdir=$(pkg-config --variable pcfiledir libcjson)
obdir=$(pkg-config --variable pcfiledir openblas)
ma=$(uname -m)-linux-gnu
mkdir -p "$WORK/pfx/usr/lib/$ma/pkgconfig"
cp "$pcdir/libcjson.pc" "$obdir/openblas.pc" "$WORK/pfx/usr/lib/$ma/pkgconfig/"
PKG_CONFIG_LIBDIR=$WORK/empty PKG_CONFIG_PATH='' A4W4_DEPS_PREFIX=$WORK/pfx \
  bash ci/find-deps.sh > "$WORK/out"
grep -q "^export PKG_CONFIG_PATH=$WORK/pfx/usr/lib/$ma/pkgconfig" "$WORK/out"
grep -q "^export CMAKE_PREFIX_PATH=$WORK/pfx" "$WORK/out"
set +e
A4W4_DEPS_PREFIX=$WORK/nonexistent bash ci/find-deps.sh 2> "$WORK/err"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "A4W4_DEPS_PREFIX=$WORK/nonexistent: no such directory" "$WORK/err"

# configure without Criterion: BUILD_TESTING=OFF succeeds, ON says what is missing. The ON
# configure reconfigures the OFF one's folder: the compiler checks (most of a configure's
# time) are the same, and the OFF configure looked up nothing of Criterion's.
mkdir -p "$WORK/pc"
ln -s "$pcdir/libcjson.pc" "$obdir/openblas.pc" "$WORK/pc/"
PKG_CONFIG_LIBDIR=$WORK/pc PKG_CONFIG_PATH='' cmake -S "$SRC" -B "$WORK/off" -DBUILD_TESTING=OFF \
  > "$WORK/off.log" 2>&1 || { tail -n 20 "$WORK/off.log"; echo "BUILD_TESTING=OFF needs Criterion"; exit 1; }
! grep -qi criterion "$WORK/off/CMakeCache.txt" || { echo "BUILD_TESTING=OFF looked for Criterion"; exit 1; }
set +e
PKG_CONFIG_LIBDIR=$WORK/pc PKG_CONFIG_PATH='' cmake -S "$SRC" -B "$WORK/off" -DBUILD_TESTING=ON \
  > "$WORK/on.log" 2>&1
rc=$?
set -e
# the configure's error is that line (a warning naming Criterion would not do)
errors=$(grep -A1 '^CMake Error' "$WORK/on.log" || :)
[ $rc -ne 0 ] && grep -q "^  Criterion (pkg-config module criterion) not found" <<< "$errors"
echo "find-deps ok"
