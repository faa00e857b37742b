#!/usr/bin/env bash
# The Oclgrind pass at full size (many hours; .ci/run runs a part of it at
# small size): every single-device suite, the trainer's included, and two
# batches of LeNet training with Oclgrind as the only OpenCL platform, then
# the multi-device suites across Oclgrind's gpu:0 and PoCL's cpu, every
# Oclgrind report failing its test. CLRT_TEST_SIZE=small in the environment
# runs the same tests at CI's sizes.
# Extra arguments go to ctest, e.g. scripts/oclgrind.sh -R conv
# Wrap it in the CPU lock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_packages.sh oclgrind
scripts/setup.sh -DCLRT_OCLGRIND=ON
CLRT_TEST_SIZE=${CLRT_TEST_SIZE:-full} CK_TIMEOUT_MULTIPLIER=100 ctest --test-dir build -L oclgrind --output-on-failure "$@"
