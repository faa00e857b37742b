#!/usr/bin/env bash
# clrt beside PyTorch on this machine's CPU, in one session: the same LeNet,
# data, batch size, optimizer and schedule. Runs ROUNDS rounds of EPOCHS
# epochs each, alternating which library goes first (the machine is shared
# and its load drifts), and prints each one's training seconds per epoch
# (mean and best over all epochs) and the ratios.
#   bench/compare_lenet.sh [EPOCHS [ROUNDS]]   (defaults 2 and 2; needs python3-torch)
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-2}
rounds=${2:-2}
py=python3
[[ -x /usr/bin/python3 ]] && py=/usr/bin/python3   # Debian's python3-torch
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "compare_lenet: PyTorch not found: apt-get install python3-torch" >&2
  exit 1
fi
[[ -x build/clrt-cnn ]] || { echo "compare_lenet: build first (scripts/setup.sh)" >&2; exit 1; }

clrt_log=$(mktemp) torch_log=$(mktemp)
trap 'rm -f "$clrt_log" "$torch_log"' EXIT
run_clrt() { build/clrt-cnn --device cpu --epochs "$epochs" | tee -a "$clrt_log" | grep -E " epoch |final"; }
run_torch() { "$py" bench/lenet_pytorch.py --epochs "$epochs" | tee -a "$torch_log"; }
for ((r = 1; r <= rounds; r++)); do
  echo "--- round $r of $rounds"
  if ((r % 2)); then run_clrt; run_torch; else run_torch; run_clrt; fi
done

# Seconds per epoch: clrt-cnn prints "... 3.21 s ..." and the script
# "train_seconds 3.84".
clrt_secs=$(awk '/ epoch /{for (i = 1; i <= NF; i++) if ($i == "s") print $(i - 1)}' "$clrt_log")
torch_secs=$(awk '/train_seconds/{print $4}' "$torch_log")
stats() { awk '{s += $1; n++; if (!b || $1 < b) b = $1} END {printf "%.2f %.2f", s / n, b}'; }
read -r clrt_mean clrt_best <<<"$(echo "$clrt_secs" | stats)"
read -r torch_mean torch_best <<<"$(echo "$torch_secs" | stats)"
clrt_acc=$(awk '/final test accuracy/{a = $4} END {print a}' "$clrt_log")
torch_acc=$(awk '/test_acc/{a = $NF} END {print a}' "$torch_log")

echo
printf "%-10s %12s %12s %16s\n" "" "mean s/ep" "best s/ep" "last test acc"
printf "%-10s %12s %12s %16s\n" "clrt cpu" "$clrt_mean" "$clrt_best" "$clrt_acc"
printf "%-10s %12s %12s %16s\n" "pytorch" "$torch_mean" "$torch_best" "$torch_acc"
awk -v cm="$clrt_mean" -v tm="$torch_mean" -v cb="$clrt_best" -v tb="$torch_best" 'BEGIN {
  printf "clrt time / pytorch time: %.2f mean, %.2f best (below 1: clrt faster)\n", cm / tm, cb / tb }'
for pair in "clrt:$clrt_acc" "pytorch:$torch_acc"; do
  awk -v n="${pair%%:*}" -v a="${pair#*:}" 'BEGIN { if (a < 0.5)
    printf "warning: %s ended at test accuracy %s: it did not learn, so its time is no fair reference\n", n, a }'
done
