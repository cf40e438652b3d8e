#!/usr/bin/env bash
# Installs the Debian packages a4w4check needs, only when one is missing (apt-get update first).
# Usage: ci/setup.sh [--build-only] [extra-package...]
# --build-only: what building the CLI needs (the main job, ci/premerge.sh, configures without
# the tests), not the test tools and the Python bridge's packages.
set -euo pipefail
pkgs=(cmake gcc make pkg-config libopenblas-dev libcjson-dev libcsv-dev)
if [ "${1:-}" = --build-only ]; then
  shift
else
  pkgs+=(libcriterion-dev gcovr libxml2-utils python3-jsonschema python3-mypy python3-numpy python3-pytest python3-torch python3-yaml)
fi
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ci/setup.sh: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
