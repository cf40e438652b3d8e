#!/usr/bin/env bash
# ci/unpack-debs.sh DEBDIR PREFIX — unpack Debian 12's cJSON, libcsv, OpenBLAS (pthread) (+ pkgconf,
# libgfortran5/libquadmath0 when the machine lacks them) into PREFIX without root or apt, and print
# the environment that lets CMake configure, build and run against them on a machine that has no
# Debian -dev packages (a GPU host without them). Usage: eval "$(bash ci/unpack-debs.sh DEBDIR PREFIX)",
# or A4W4_DEPS_PREFIX=PREFIX for ci/find-deps.sh. Takes the .debs docs/nightly.md lists.
set -euo pipefail
debs=$1; P=$2
mkdir -p "$P"
unpack() { # deb dest
  if command -v dpkg-deb >/dev/null 2>&1; then dpkg-deb -x "$1" "$2"
  else python3 - "$1" "$2" <<'PY'
import sys, tarfile, io
data = open(sys.argv[1], 'rb').read(); off = 8
while off < len(data):
    name = data[off:off+16].decode().strip(); size = int(data[off+48:off+58]); body = data[off+60:off+60+size]
    if name.startswith('data.tar'):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    off += 60 + size + (size & 1)
PY
  fi
}
for d in "$debs"/libcjson*.deb "$debs"/libcsv*.deb "$debs"/libopenblas*.deb "$debs"/pkgconf*.deb "$debs"/libpkgconf*.deb; do
  unpack "$d" "$P"
done
L=$P/usr/lib/x86_64-linux-gnu
# .pc files carry /usr: point them at the prefix
sed -i "s#/usr/#$P/usr/#g" "$L/pkgconfig/libcjson.pc" "$L/openblas-pthread/pkgconfig/openblas.pc"
ln -sf "$L/openblas-pthread/pkgconfig/openblas.pc" "$L/pkgconfig/openblas.pc"
rtpath="$L:$L/openblas-pthread"
# libgfortran5 (OpenBLAS needs it) only when the machine has none
# (into PREFIX itself, so that A4W4_DEPS_PREFIX=PREFIX finds it too)
# ldconfig's list is read whole: under pipefail `ldconfig -p | grep -q` fails when grep exits
# at the first match while ldconfig still writes (SIGPIPE)
if ! grep -q 'libgfortran.so.5' <<< "$(ldconfig -p 2>/dev/null || true)"; then
  for d in "$debs"/libgfortran5*.deb "$debs"/libquadmath0*.deb; do unpack "$d" "$P"; done
  echo "deps: libgfortran5 not on this machine; using the unpacked one" >&2
fi
echo "export PKG_CONFIG_PATH=$L/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
echo "export CPATH=$P/usr/include\${CPATH:+:\$CPATH}"
echo "export LIBRARY_PATH=$rtpath\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
echo "export LD_LIBRARY_PATH=$rtpath\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "deps: no pkg-config on this machine; using the unpacked pkgconf" >&2
  ln -sf pkgconf "$P/usr/bin/pkg-config"
  echo "export PATH=\$PATH:$P/usr/bin"
fi
