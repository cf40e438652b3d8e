#!/usr/bin/env bash
# mypy --strict over the package python/a4w4check (python/pyproject.toml holds the settings:
# torch, triton, safetensors and aiter enter as Any). Exit 77, which CTest reports as skipped,
# with one line saying why, when Debian's python3 has no mypy (ci/setup.sh installs
# python3-mypy).
# Usage: check_types.sh SRC CACHE_DIR
set -u
SRC=$1 CACHE=$2
PY=/usr/bin/python3
if ! "$PY" -c "import mypy" 2>/dev/null; then
  echo "python_mypy: skipped: mypy is not importable by $PY (ci/setup.sh installs python3-mypy)"
  exit 77
fi
exec "$PY" -m mypy --strict --config-file "$SRC/python/pyproject.toml" --cache-dir "$CACHE" \
  "$SRC/python/a4w4check"
