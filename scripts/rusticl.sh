#!/usr/bin/env bash
# The rusticl pass: every single-device suite on Mesa's rusticl (Debian 12's
# mesa-opencl-icd, Mesa 22.3), a third OpenCL implementation beside PoCL and
# Oclgrind: a CPU device through llvmpipe, with unified memory and no
# native kernels (GEMM goes through CLBlast). CLRT_TEST_SIZE=small unless
# the environment sets it. Nothing system-wide: the package is unpacked
# into build/rusticl and registered through an ICD file in the build tree
# (tests/rusticl/CMakeLists.txt); its shared-library dependencies are
# installed as ordinary Debian packages.
# Extra arguments go to ctest, e.g. scripts/rusticl.sh -R conv; CI runs
# scripts/rusticl.sh -L rusticl-ci (all but test_alloc_fail).
# Wrap it in the CPU lock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# mesa-opencl-icd's Depends (libclc-15 holds the OpenCL C library rusticl
# links kernels against); quick when they are there.
scripts/install_packages.sh libclc-15 libllvmspirvlib15 libclang-cpp15 libllvm15 libdrm2 \
  libdrm-amdgpu1 libdrm-nouveau2 libdrm-radeon1 libelf1 libexpat1 libsensors5 libzstd1 zlib1g \
  ocl-icd-libopencl1

dir=build/rusticl
lib=$(find "$dir/root" -name libRusticlOpenCL.so.1 2>/dev/null | head -n 1 || true)
if [[ -z $lib ]]; then
  mkdir -p "$dir/deb"
  rm -f "$dir"/deb/mesa-opencl-icd_*.deb
  # apt-get download needs the package lists; fetch them only when it fails.
  if ! (cd "$dir/deb" && apt-get download -q mesa-opencl-icd 2>/dev/null); then
    if [[ $(id -u) -eq 0 ]]; then apt-get update -qq; else sudo -n apt-get update -qq; fi
    (cd "$dir/deb" && apt-get download -q mesa-opencl-icd)
  fi
  dpkg-deb -x "$dir"/deb/mesa-opencl-icd_*.deb "$dir/root"
  lib=$(find "$dir/root" -name libRusticlOpenCL.so.1 | head -n 1)
fi
lib=$(realpath -s "$lib")
version=$(dpkg-deb -f "$dir"/deb/mesa-opencl-icd_*.deb Version 2>/dev/null || echo "version unknown")
echo "rusticl: $lib (mesa-opencl-icd $version)"

scripts/setup.sh -DCLRT_RUSTICL="$lib"
jobs=$(nproc 2>/dev/null || echo 2)
CLRT_TEST_SIZE=${CLRT_TEST_SIZE:-small} ctest --test-dir build -L rusticl --output-on-failure \
  -j"$jobs" "$@"
