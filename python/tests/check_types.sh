#!/usr/bin/env bash
# mypy --strict over the package python/a4w4check, run from the repository root exactly as
# python/README.md says (`python3 -m mypy --strict python/a4w4check`: the root's mypy.ini holds
# the settings, torch, triton, safetensors and aiter entering as Any). Exit 77, which CTest
# reports as skipped, with one line saying why, when Debian's python3 has no mypy
# (ci/setup.sh installs python3-mypy).
# Usage: check_types.sh SRC CACHE_DIR
set -u
SRC=$1 CACHE=$2
PY=/usr/bin/python3
if ! "$PY" -c "import mypy" 2>/dev/null; then
  echo "python_mypy: skipped: mypy is not importable by $PY (ci/setup.sh installs python3-mypy)"
  exit 77
fi
cd "$SRC" || exit 2
exec "$PY" -m mypy --strict --cache-dir "$CACHE" python/a4w4check
