#!/usr/bin/env bash
# Set-up, then the whole test suite. Extra cmake options pass through, e.g.
# scripts/test.sh -DCLRT_WERROR=ON
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh "$@"
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j"$jobs"
