#!/usr/bin/env bash
# clrt against today's PyTorch (from PyPI) on this machine's CPU, alternately,
# in rounds: LeNet/Fashion-MNIST with SGD, the seed notebook's CNN with Adam
# on CIFAR-10, SGEMM 128 and 1024, one small op, and the logging exercise.
# Prints one table of ratios clrt / PyTorch (below 1: clrt faster), min,
# median and max over the rounds. Sets up the project's .venv
# (scripts/setup_python.sh) on first use, builds clrt if needed, and writes
# CIFAR-10-shaped data from a seed when no --cifar-dir is given. Both sides run on --threads threads (default 2).
#   bench/compare.sh [--rounds 3] [--epochs 2] [--only lenet,seed-cnn,...]
#                    [--cifar-dir DIR] [--limit N] [--json-out FILE]
# Run it alone on the machine (on a shared one: flock /tmp/clrt-cpu.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(bench/setup_venv.sh)
[[ -x build/clrt-cnn && -x build/clrt-bench ]] || scripts/setup.sh >&2

args=("$@")
cifar=
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[i]} == --cifar-dir ]] && cifar=${args[i + 1]:-}
  [[ ${args[i]} == --cifar-dir=* ]] && cifar=${args[i]#--cifar-dir=}
done
if [[ -z $cifar ]]; then
  cifar=bench/.data/cifar10-synthetic-seed1
  [[ -f $cifar/test_batch.bin ]] || "$py" bench/make_cifar10.py --seed 1 --out "$cifar" >&2
  args+=(--cifar-dir "$cifar")
fi
exec "$py" bench/compare.py --python "$py" "${args[@]}"
