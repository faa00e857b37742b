#!/usr/bin/env bash
# The Oclgrind pass at full size (hours; .ci/run runs it at small size):
# every single-device suite and two batches of LeNet training with Oclgrind
# as the only OpenCL platform, then the multi-device suites across
# Oclgrind's gpu:0 and PoCL's cpu, every Oclgrind report failing its test.
# Extra arguments go to ctest, e.g. scripts/oclgrind.sh -R conv
# Wrap it in the CPU lock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_packages.sh oclgrind
scripts/setup.sh -DCLRT_OCLGRIND=ON
CLRT_TEST_SIZE=full ctest --test-dir build -L oclgrind --output-on-failure "$@"
