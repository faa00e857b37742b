#!/usr/bin/env bash
# Set-up, then the CNN demo on the best device (clrt-cnn's defaults: LeNet on
# Fashion-MNIST from Debian's dataset-fashion-mnist). Extra arguments go to
# clrt-cnn, e.g. scripts/demo.sh --compare --epochs 2
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/clrt-smi
exec build/clrt-cnn "$@"
