#!/usr/bin/env bash
# The main job: set up, build, and run `a4w4check run` on its embedded default (the
# pre-merge matrix in cases/premerge.csv plus every bundle in cases/golden/), on the CPU.
# Results: build/out/results.json and build/out/summary.md. Extra arguments go to `run`.
# The CPU systems under test declare the reading of E8M0 code 0 they implement (2^-127, the
# oracles'; recorded in results.json and the summary), so the pre-merge code0 cases are judged
# under it with no option (docs/contracts.md §1).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/setup.sh --build-only
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)"
./build/a4w4check run "$@"
