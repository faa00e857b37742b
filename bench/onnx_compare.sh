#!/usr/bin/env bash
# clrt-onnx against onnxruntime (from PyPI, pinned in scripts/requirements.txt)
# on this machine, alternately in rounds: inference seconds per batch of
# torchvision's resnet18 and mobilenet_v2 at 224x224 (random weights, seed 0,
# exported to ONNX opset 17 by tests/python/onnx_export.py), batch 1 and 16;
# clrt-onnx bench --json against onnxruntime's CPUExecutionProvider on 2
# threads (intra_op_num_threads=2), the median of 10 runs after 3 of warm-up,
# each in a child process of its own; the ratio clrt / onnxruntime per round
# and min, median and max, and each side's peak resident memory. Sets up the
# project's .venv (scripts/setup_python.sh) on first use. The caller keeps
# the output, e.g. under bench/results/onnx/:
#   bench/onnx_compare.sh [--clrt-onnx build/clrt-onnx] [--rounds 3] [--batches 1,16]
#        [--models resnet18,mobilenet_v2] [--size 224] [--device D] [--json-out FILE]
#        [--ort-only]                                     (bench/onnx_compare.py --help)
#   mkdir -p bench/results/onnx && bench/onnx_compare.sh --json-out bench/results/onnx/compare.json \
#     | tee bench/results/onnx/compare.txt
# Run it alone on the machine (on a shared one: flock /tmp/clrt-cpu.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(bench/setup_venv.sh)
args=("$@")
have_prog=
for a in "${args[@]}"; do
  [[ $a == --clrt-onnx || $a == --clrt-onnx=* || $a == --ort-only ]] && have_prog=1
done
if [[ -z $have_prog ]]; then
  [[ -x build/clrt-onnx ]] || scripts/setup.sh >&2
  args+=(--clrt-onnx build/clrt-onnx)
fi
exec "$py" bench/onnx_compare.py "${args[@]}"
