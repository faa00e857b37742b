#!/usr/bin/env bash
# clrt beside PyTorch on this machine's CPU, in one session: the same LeNet,
# data, batch size and optimizer. Prints each one's training seconds per
# epoch (mean over the epochs) and the ratio.
#   bench/compare_lenet.sh [EPOCHS]      (default 2; needs python3-torch)
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-2}
py=python3
[[ -x /usr/bin/python3 ]] && py=/usr/bin/python3   # Debian's python3-torch
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "compare_lenet: PyTorch not found: apt-get install python3-torch" >&2
  exit 1
fi
clrt_out=$(build/clrt-cnn --device cpu --epochs "$epochs")
torch_out=$("$py" bench/lenet_pytorch.py --epochs "$epochs")
echo "$clrt_out" | grep -E "epoch|final"
echo "$torch_out"
clrt_s=$(echo "$clrt_out" | awk '/ epoch /{for(i=1;i<=NF;i++) if($i=="s") {sum+=$(i-1); n++}} END{printf "%.2f", sum/n}')
torch_s=$(echo "$torch_out" | awk '/train_seconds/{sum+=$4; n++} END{printf "%.2f", sum/n}')
clrt_acc=$(echo "$clrt_out" | awk '/final test accuracy/{print $4}')
torch_acc=$(echo "$torch_out" | awk '/test_acc/{a=$NF} END{print a}')
echo
printf "%-10s %14s %14s\n" "" "s/epoch" "test acc"
printf "%-10s %14s %14s\n" "clrt cpu" "$clrt_s" "$clrt_acc"
printf "%-10s %14s %14s\n" "pytorch" "$torch_s" "$torch_acc"
awk -v c="$clrt_s" -v t="$torch_s" 'BEGIN{printf "clrt time / pytorch time: %.2f (below 1: clrt faster)\n", c/t}'
