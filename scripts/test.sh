#!/usr/bin/env bash
# Set-up, then the whole test suite. Extra cmake options pass through, e.g.
# scripts/test.sh -DCLRT_WERROR=ON
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh "$@"
scripts/setup_python.sh >/dev/null # the Python checks' packages: the suite then runs offline
jobs=$(nproc 2>/dev/null || echo 2)
# The Oclgrind pass (label oclgrind) has its own commands (.ci/run,
# scripts/oclgrind.sh), even where ./build was configured with it.
ctest --test-dir build --output-on-failure -j"$jobs" -LE oclgrind
