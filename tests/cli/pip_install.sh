#!/usr/bin/env bash
# `pip install ./python` (docs/bridge.md, the Debian 12 route: a venv that sees the system's
# numpy, setuptools without build isolation, nothing fetched) gives a package that judges in
# this process without the repository: the library (found at A4W4CHECK_LIB, this build's) and
# the case files are copied into it, and from another directory, with no A4W4CHECK_LIB, the
# installed package loads its own liba4w4check, passes the example kernel and lists AITER's
# op-test shapes. The package is installed from a copy of python/ (the build writes beside it).
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
B=$(dirname "$CLI")
rm -rf "$WORK"; mkdir -p "$WORK"; cd "$WORK"
fail() { echo "pip_install: $*"; exit 1; }
/usr/bin/python3 -m venv --system-site-packages venv > venv.log 2>&1 || { cat venv.log; fail "venv"; }
cp -r "$SRC/python" src-python
A4W4CHECK_LIB=$B/liba4w4check.so A4W4CHECK_SOURCE=$SRC venv/bin/pip install \
  --no-build-isolation --no-deps --no-index ./src-python > pip.log 2>&1 || { tail -20 pip.log; fail "pip install"; }
site=$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ -f "$site/a4w4check/liba4w4check.so" ] || fail "no library in the installed package"
[ -f "$site/a4w4check/cases/edge.csv" ] || fail "no case files in the installed package"
cd /
env -u A4W4CHECK_LIB -u A4W4CHECK_CASES PYTHONPATH="$SRC/examples/python" \
  "$WORK/venv/bin/python" - "$site" <<'PY' || fail "the installed package does not judge"
import sys
import a4w4check, my_kernel
from a4w4check import casesets, inproc
site = sys.argv[1]
assert inproc.library()._name == f"{site}/a4w4check/liba4w4check.so", inproc.library()._name
assert casesets.cases_dir() == f"{site}/a4w4check/cases", casesets.cases_dir()
v = a4w4check.judge(my_kernel.gemm, 4, 64, 256)
assert v.passed and v.checked == 256, v.line
assert len(casesets.load("aiter-op-test")) == 67
PY
echo "pip_install: installed into a venv; the package judges with its own library"
