#!/usr/bin/env bash
# Runs ONNX's node tests named in a list (tests/onnx/node_tests.txt: the
# issue's ops on tensors, from tests/onnx/node_tests.py) through
# `clrt-onnx test` on one device, and passes only when every one of them
# passed: a test that fails or is refused (skipped) fails the run.
#   tests/onnx/run_node_tests.sh CLRT_ONNX LIST DATA_DIR DEVICE
set -euo pipefail
onnx=$1 list=$2 data=$3 device=${CLRT_TEST_DEVICE:-$4}
if [[ ! -d $data ]]; then
  echo "run_node_tests: $data is missing: install libonnx-testdata" >&2
  exit 1
fi
dirs=()
while read -r name; do
  [[ -n $name ]] && dirs+=("$data/$name")
done <"$list"
# clrt-onnx test exits 1 when a test fails; the closing line is checked
# below instead (it also catches refusals, which exit 0), so its status
# is not what decides.
out=$("$onnx" test --device "$device" "${dirs[@]}") || true
# The lines that are not PASS (none when all pass: grep then exits 1).
printf '%s\n' "$out" | grep -v '^PASS ' || true
want="${#dirs[@]} passed, 0 failed, 0 skipped"
last=$(printf '%s\n' "$out" | tail -n 1)
echo "$last (of ${#dirs[@]} listed)"
[[ $last == "$want" ]]
