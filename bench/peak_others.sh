#!/usr/bin/env bash
# `clrt-bench peak --json` on this machine's other OpenCL implementations,
# each registered privately (an ICD folder under build/, nothing
# system-wide): Oclgrind, the simulated GPU (always), and Mesa's rusticl on
# llvmpipe (once scripts/rusticl.sh has unpacked it). Writes
# OUT/oclgrind/peak.json and OUT/rusticl/peak.json; bench/benchmarks.py
# renders them beside the PoCL run's limits.
#   bench/peak_others.sh [--out bench/results]
# Oclgrind interprets every work item, so its samples are small (1024 items,
# 1 MiB buffers, 200 launches, 3 repeats): its figures measure the
# simulator, not a device.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results
[[ ${1:-} == --out ]] && out=$2
[[ -x build/clrt-bench ]] || scripts/setup.sh >&2

scripts/install_packages.sh oclgrind
icd=$(find /usr/lib /usr/local/lib -path '*oclgrind/liboclgrind-rt-icd.so' 2>/dev/null | head -n 1)
[[ -n $icd ]] || { echo "peak_others: no liboclgrind-rt-icd.so under /usr/lib" >&2; exit 1; }
mkdir -p build/peak-vendors/oclgrind "$out/oclgrind"
echo "$icd" > build/peak-vendors/oclgrind/oclgrind.icd
OCL_ICD_VENDORS=$PWD/build/peak-vendors/oclgrind build/clrt-bench peak --device gpu:0 --json \
  --items 1024 --kib 1024 --launches 200 --repeats 3 --min-ms 0 > "$out/oclgrind/peak.json"
echo "peak_others: $out/oclgrind/peak.json"

lib=$(find build/rusticl/root -name libRusticlOpenCL.so.1 2>/dev/null | head -n 1 || true)
if [[ -z $lib ]]; then
  echo "peak_others: rusticl not measured: scripts/rusticl.sh unpacks it into build/rusticl" >&2
  exit 0
fi
mkdir -p build/peak-vendors/rusticl "$out/rusticl"
realpath -s "$lib" > build/peak-vendors/rusticl/rusticl.icd
OCL_ICD_VENDORS=$PWD/build/peak-vendors/rusticl RUSTICL_ENABLE=llvmpipe \
  MESA_SHADER_CACHE_DIR=$PWD/build/rusticl/mesa-shader-cache \
  build/clrt-bench peak --device cpu --json > "$out/rusticl/peak.json"
echo "peak_others: $out/rusticl/peak.json"
