#!/usr/bin/env bash
# Data-parallel scaling of LeNet training on this machine, one core per
# worker: two PoCL devices in one process and two MPI ranks, each against
# one device on one core (bench/scaling.py says how). Builds clrt if needed.
#   bench/scaling.sh [--rounds 3] [--epochs 2] [--limit 30720] [--no-mpi]
# Run it alone on the machine (on a shared one: flock /tmp/clrt-cpu.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/clrt-cnn ]] || scripts/setup.sh >&2
exec python3 bench/scaling.py "$@"
