#!/usr/bin/env bash
# Installs the Debian packages clrt needs (only those missing), then
# configures and builds into ./build. Quick when everything is there.
#   scripts/setup.sh [extra cmake options...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config     # toolchain
  ocl-icd-opencl-dev opencl-c-headers  # OpenCL ICD loader and headers
  pocl-opencl-icd                      # an OpenCL driver for the CPU
  libclblast-dev                       # GEMM on OpenCL devices
  libopenblas-dev                      # GEMM on CPU devices (host BLAS)
  zlib1g-dev                           # gzipped data sets
  check libsubunit-dev                 # unit tests
  python3                              # test helpers (JSON validation)
  dataset-fashion-mnist                # the CNN demo's data
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    echo "setup: installing ${missing[*]} (sudo)"
    sudo -n apt-get update -qq
    sudo -n DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: these Debian packages are missing: ${missing[*]}" >&2
    echo "setup: run as root:  apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j"$jobs" >/dev/null
echo "setup: built clrt in ./build"
