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
  clblast-utils                        # CLBlast's tuners (clrt-smi --tune)
  libopenblas-dev                      # GEMM on CPU devices (host BLAS)
  zlib1g-dev                           # gzipped data sets
  libopenmpi-dev openmpi-bin           # the distributed part (libclrt_mpi, mpirun)
  check libsubunit-dev                 # unit tests
  python3                              # test helpers (JSON validation)
  python3-venv                         # the tests' Python environment (scripts/setup_python.sh)
  dataset-fashion-mnist                # the CNN demo's data
  fortunes                             # the language-model demo's text (clrt-lm)
  clang-15 libclc-15                   # the kernels built for NVIDIA GPUs (scripts/nvptx.sh)
  protobuf-c-compiler libprotobuf-c-dev # the ONNX reader (generated from onnx.proto by protoc-c)
  libonnx-dev                          # onnx.proto
  libonnx-testdata                     # ONNX's own node tests (clrt-onnx test)
)

scripts/install_packages.sh "${packages[@]}"

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j"$jobs" >/dev/null
echo "setup: built clrt in ./build"
